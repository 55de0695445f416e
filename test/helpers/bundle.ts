/**
 * Bundles a test's child-process script with esbuild (Lua as text, the optional peers left
 * to node_modules) so that a separate OS process can run it with plain `node`.
 */
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Bundles `entry` (relative to the repo root) and returns the bundle's path. */
export async function bundleScript(entry: string, name: string): Promise<string> {
  const dir = `${root}node_modules/.cache/sonde-test-bundles`;
  mkdirSync(dir, { recursive: true });
  const outfile = `${dir}/${name}.mjs`;
  await build({
    entryPoints: [`${root}${entry}`],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile,
    external: ["ioredis", "bullmq", "msw", "msw/node"],
    loader: { ".lua": "text" },
    logLevel: "error",
  });
  return outfile;
}
