/**
 * `sonde … | head`: a reader that closes the pipe early ends the output quietly. A real
 * child process running the bundled CLI, whose stdout is closed before it writes.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, expect, it } from "vitest";

let dir: string;
let cli: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sonde-cli-pipe-"));
  await writeFile(join(dir, "package.json"), '{ "type": "module" }\n');
  // Named cli.js: the entry runs main() only when executed as the CLI.
  cli = join(dir, "cli.js");
  await build({
    entryPoints: [new URL("../src/cli/main.ts", import.meta.url).pathname],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: cli,
    logLevel: "silent",
  });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

it("exits cleanly, without a stack trace, when stdout is closed by the reader", async () => {
  const child = spawn(process.execPath, [cli, "models", "--json"], {
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...process.env, SONDE_STORE_DIR: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.destroy(); // like `| head -0`: nobody reads what the CLI writes
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  expect(stderr).not.toMatch(/EPIPE|Unhandled 'error' event/);
  expect(code).toBe(0);
}, 30_000);
