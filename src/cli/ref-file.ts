/** Reads a ref file for attach/status/cancel, with a message that says what to do instead. */
import { existsSync, readFileSync } from "node:fs";
import { InvalidRefError } from "../errors.js";
import { type JobRef, parseRef } from "../ref.js";
import { UsageError } from "./usage.js";

export function readRefFile(path: string | undefined): JobRef {
  if (!path)
    throw new UsageError("missing <ref.json> (saved by --detach, or <file>.ref.json by --record <file>)");
  let text: string;
  try {
    text = path === "-" ? readFileSync(0, "utf8") : readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(
      code === "ENOENT" ? `no such file: ${path}` : `cannot read ${path} (${code ?? error})`,
    );
  }
  try {
    // parseRef checks the text's size before parsing it.
    return parseRef(text);
  } catch (error) {
    if (!(InvalidRefError.isInstance(error) && error.field === "(root)") || isJson(text)) throw error;
  }
  const lines = text.trim().split("\n");
  if (lines.length > 1 && lines.every((line) => line.trim().startsWith("{"))) {
    const refFile = `${path}.ref.json`;
    throw new UsageError(
      `${path} is an event recording (one event per line), not a ref. ` +
        (existsSync(refFile)
          ? `Attach its ref instead: sonde attach ${refFile}`
          : `Attach the ref saved beside it (<file>.ref.json), or read it offline: sonde replay ${path}`),
    );
  }
  throw new UsageError(
    `${path} is not JSON. Give the ref a job printed with --detach or saved as <file>.ref.json by --record.`,
  );
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
