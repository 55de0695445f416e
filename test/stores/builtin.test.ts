import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { createFileStore, createMemoryStore } from "../../providers/portable/index.js";
import { storeContract } from "./contract.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

storeContract("memory", () => createMemoryStore());
storeContract("file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "sonde-store-"));
  dirs.push(dir);
  return createFileStore({ dir });
});
