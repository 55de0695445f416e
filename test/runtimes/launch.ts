/**
 * Runs the cases on each runtime, one process per runtime, against the BUILT package:
 * a scratch app outside the repo whose node_modules/sonde links to the repo (so `sonde`
 * resolves through package.json `exports` to dist/, as a user's import does). Node, Bun
 * and Deno run the main entry; workerd (through miniflare) runs a Workers bundle of
 * `sonde/core`. Every runtime comes from an npm devDependency, no system install.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import type { CaseResult } from "./cases.js";

export const root = resolve(import.meta.dirname, "../..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);

/** One runtime's whole run, at most: a hung runtime fails with its name, not as a hook timeout. */
const RUN_TIMEOUT_MS = 120_000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface RuntimeRun {
  runtime: string;
  ms: number;
  results?: CaseResult[];
  /** Why the runtime produced no results at all (it did not start, or crashed). */
  failure?: string;
}

/** The scratch app: its own package.json, and node_modules linking sonde and zod. */
export function scratchApp(): string {
  if (!existsSync(join(root, "dist", "index.js")))
    throw new Error("dist/ is missing: the runtime tests run the built package; run `npm run build` first");
  const app = realpathSync(mkdtempSync(join(tmpdir(), "sonde-runtimes-")));
  mkdirSync(join(app, "node_modules"));
  symlinkSync(root, join(app, "node_modules", "sonde"), "dir");
  symlinkSync(join(root, "node_modules", "zod"), join(app, "node_modules", "zod"), "dir");
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "runtime-app", private: true, type: "module" }),
  );
  return app;
}

const silenceBareImports = { "ignored-bare-import": "silent" } as const;

/** The main entry for Node, Bun and Deno: the cases bundled in, `sonde` left to the runtime to resolve. */
export async function bundleMainEntry(app: string): Promise<string> {
  const outfile = join(app, "main.mjs");
  await build({
    entryPoints: [join(import.meta.dirname, "main-entry.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    external: ["sonde", "sonde/*"],
    outfile,
    logLevel: "error",
  });
  return outfile;
}

/**
 * A Workers bundle, as wrangler makes one: everything in one module, Workers conditions, and
 * `node:*` left to the runtime only with `nodeCompat` (else a Node built-in fails the build).
 * `worker-entry.ts` is the lean app (`sonde/core`), `worker-main-entry.ts` the main entry's.
 */
export async function bundleWorker(app: string, entry: string, nodeCompat = false): Promise<string> {
  const outfile = join(app, entry.replace(/\.ts$/, nodeCompat ? ".compat.mjs" : ".mjs"));
  await build({
    entryPoints: [join(import.meta.dirname, entry)],
    absWorkingDir: app,
    nodePaths: [join(app, "node_modules")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: nodeCompat ? ["node:*"] : [],
    outfile,
    logLevel: "silent",
    logOverride: silenceBareImports,
  });
  return outfile;
}

function spawnRuntime(runtime: string, command: string, args: string[], app: string): Promise<RuntimeRun> {
  const started = Date.now();
  return new Promise((done) => {
    execFile(
      command,
      args,
      {
        cwd: app,
        maxBuffer: 64 * 1024 * 1024,
        timeout: RUN_TIMEOUT_MS,
        env: { PATH: process.env.PATH ?? "", HOME: app, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      },
      (error, stdout, stderr) => {
        const ms = Date.now() - started;
        const line = stdout.trim().split("\n").at(-1) ?? "";
        try {
          done({ runtime, ms, results: JSON.parse(line) as CaseResult[] });
        } catch {
          const why = error ? `${error.message}` : "it printed no result line";
          done({
            runtime,
            ms,
            failure: `${why}\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-4000)}`,
          });
        }
      },
    );
  });
}

export function runNode(app: string, main: string, base: string): Promise<RuntimeRun> {
  return spawnRuntime("node", bin("node"), [main, "node", base], app);
}

export function runBun(app: string, main: string, base: string): Promise<RuntimeRun> {
  return spawnRuntime("bun", bin("bun"), [main, "bun", base], app);
}

export function runDeno(app: string, main: string, base: string): Promise<RuntimeRun> {
  // Network to the loopback host only; reads of the app and the package it links to; nothing else.
  const flags = ["run", "--no-prompt", "--allow-net=127.0.0.1", `--allow-read=${app},${root}`];
  return spawnRuntime("deno", bin("deno"), [...flags, main, "deno", base], app);
}

/**
 * workerd through miniflare. Without `nodejs_compat` (the default here) a Node built-in
 * anywhere in the bundle fails its load; `runtime` names the run (and its fakes' prefix).
 */
export async function runWorkerd(
  app: string,
  script: string,
  base: string,
  { runtime = "workerd", flags = [] as string[] } = {},
): Promise<RuntimeRun> {
  const started = Date.now();
  let mf: Miniflare | undefined;
  try {
    mf = new Miniflare({
      modules: true,
      scriptPath: script,
      modulesRoot: app,
      compatibilityDate: "2026-07-30",
      compatibilityFlags: flags,
    });
    const query = new URLSearchParams({ runtime, base });
    const text = await withTimeout(
      mf.dispatchFetch(`http://localhost/?${query}`).then(async (response) => {
        const body = await response.text();
        if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${body}`);
        return body;
      }),
      RUN_TIMEOUT_MS,
    );
    return { runtime, ms: Date.now() - started, results: JSON.parse(text) as CaseResult[] };
  } catch (error) {
    return { runtime, ms: Date.now() - started, failure: String((error as Error).stack ?? error) };
  } finally {
    await mf?.dispose();
  }
}
