#!/usr/bin/env node
import { resolve } from "node:path";
// Size and portability budget, run by `npm test` after the build: bundles what an app
// would ship (minified, zod external as the peer it is) and fails when
//  - core + one managed engine (`createSonde` from sonde/core + one adapter) is over
//    BUDGET_KB min+gz. The goal is 30 KB; today OpenAI (~31.5) and Gemini (~33) are over
//    it (ky, and the whole catalog, are in core), so the budget holds the line at 34 KB
//    against growth until they are trimmed, and the output says which engines meet 30. Or
//  - the main entry (`import { Sonde } from "sonde"`) statically imports a Node built-in
//    (the portable engine's file store loads its built-ins lazily, on first use).
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
const BUDGET_KB = 34;
const GOAL_KB = 30;

async function bundle(name, source) {
  const result = await build({
    stdin: { contents: source, resolveDir: root, sourcefile: `${name}.js` },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    external: ["zod", "node:*"],
    write: false,
    metafile: true,
    // The package says `sideEffects: false`; tsup's bare chunk imports are then dropped on purpose.
    logLevel: "error",
  });
  const code = result.outputFiles[0].contents;
  const [output] = Object.values(result.metafile.outputs);
  return { min: code.length, gzip: gzipSync(code, { level: 9 }).length, imports: output.imports };
}

let failed = false;
const kb = (bytes) => (bytes / 1024).toFixed(1);

const engines = ["openai", "gemini", "openrouter", "perplexity", "hosted"];
for (const engine of engines) {
  const one = await bundle(
    `core+${engine}`,
    `export { createSonde } from "./dist/core.js"; export { ${engine}Adapter } from "./dist/providers/${engine}.js";`,
  );
  const over = one.gzip > BUDGET_KB * 1024;
  if (over) failed = true;
  const goal = one.gzip <= GOAL_KB * 1024 ? `within the ${GOAL_KB} KB goal` : `over the ${GOAL_KB} KB goal`;
  console.log(
    `${over ? "FAIL" : "ok  "} core + ${engine}: ${kb(one.min)} KB min, ${kb(one.gzip)} KB min+gz, ${goal} (budget ${BUDGET_KB} KB, zod excluded)`,
  );
}

const main = await bundle("main", `export { Sonde } from "./dist/index.js";`);
const builtins = main.imports.filter((i) => i.path.startsWith("node:") && i.kind !== "dynamic-import");
console.log(`info main entry (every engine): ${kb(main.min)} KB min, ${kb(main.gzip)} KB min+gz`);
if (builtins.length > 0) {
  failed = true;
  console.log(`FAIL main entry imports Node built-ins statically: ${builtins.map((i) => i.path).join(", ")}`);
} else {
  const lazy = main.imports.filter((i) => i.path.startsWith("node:")).map((i) => i.path);
  console.log(
    `ok   main entry has no static Node built-in import (lazy, file store only: ${[...new Set(lazy)].join(", ") || "none"})`,
  );
}
if (failed) process.exit(1);
