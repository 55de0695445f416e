/**
 * `providerHandlers` under plain Node, not vitest: a job run to `result()` and the msw
 * server closed at once must not crash the process. (It did, for the streamed engines:
 * the body was cancelled only after `result()` settled, racing the server's close, and
 * undici asserted `!this.aborted`.) A real child process running the bundled sources.
 */
import { spawn } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, expect, it } from "vitest";

// Under node_modules so the bundle resolves msw (an external, as in a user's project).
const dir = new URL("../../node_modules/.cache/sonde-plain-node/", import.meta.url).pathname;
const script = `${dir}teardown-after-result.mjs`;

beforeAll(async () => {
  await mkdir(dir, { recursive: true });
  await build({
    entryPoints: [new URL("child/teardown-after-result.ts", import.meta.url).pathname],
    bundle: true,
    platform: "node",
    format: "esm",
    external: ["msw", "msw/*"],
    outfile: script,
    logLevel: "silent",
  });
});

afterAll(() => rm(dir, { recursive: true, force: true }));

it("closing the msw server right after result() never crashes a plain Node process", async () => {
  const child = spawn(process.execPath, [script], { env: { ...process.env, RUNS: "2" }, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  expect(stderr).not.toContain("AssertionError");
  expect({ code, stderr: stderr.slice(0, 2_000) }).toEqual({ code: 0, stderr: "" });
  const lines = stdout.trim().split("\n");
  expect(lines).toHaveLength(10);
  for (const engine of ["openai", "gemini", "openrouter", "perplexity", "hosted"])
    expect(lines.filter((line) => line === `${engine} completed`)).toHaveLength(2);
});

it("the handlers load msw from a module imported by `node --eval` (whose global __filename is not a path)", async () => {
  const child = spawn(
    process.execPath,
    [
      "--eval",
      `import(${JSON.stringify(pathToFileURL(script).href)}).catch((e) => { console.error(e); process.exit(1); });`,
    ],
    { env: { ...process.env, RUNS: "1" }, stdio: "pipe" },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  expect({ code, stderr: stderr.slice(0, 2_000) }).toEqual({ code: 0, stderr: "" });
  expect(stdout.trim().split("\n")).toHaveLength(5);
});
