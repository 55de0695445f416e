#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
// Size and portability budget, run by `npm test` after the build: bundles what an app
// would ship (minified, zod external as the peer it is) and fails when
//  - core + one managed engine (`createSonde` from sonde/core + one adapter) is over its
//    budget in BUDGET_KB, min+gz, measured as what loads up front (entry + static chunks; lazy
//    `import()`s split off as a bundler does). The budget is 30 KB for every engine. What only
//    a failure, a rare path or an option needs loads on first use: p-retry (on the first failed
//    attempt), eventsource-parser (with the first stream: a poll-only job never needs it), a
//    failed response's reading and typing (error-body.ts and each engine's own error reading),
//    the never-sent classification of a failed call, the pre-job 429 rules, the spend meter
//    and cap handling (jobs with a cap), the ref tag's hashing (when a keyed job starts, in
//    parallel with its submission), what a failed submission means, a Responses get() and
//    cancel(), the joining of a read's text deltas (delta-run.ts: result()-only Responses jobs). Or
//  - such a bundle loads one of those cold paths up front (COLD), or the event schemas, which
//    the core does not use (they are an internal tsup entry so that they stay in a chunk of
//    their own), or
//  - such a bundle holds another engine's catalog entries (the catalog is data), or
//  - the main entry (`import { Sonde } from "sonde"`) statically imports a Node built-in
//    (the portable engine's file store loads its built-ins lazily, on first use), or loads
//    any engine's session code or the portable engine's research loop up front (each engine
//    loads when a job of it first starts, src/lazy-engine.ts; the loop when a portable job runs).
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = resolve(import.meta.dirname, "..");
/** KB min+gz per engine: the goal, for every engine. */
const BUDGET_KB = { openai: 30, gemini: 30, openrouter: 30, perplexity: 30, hosted: 30 };
const GOAL_KB = 30;
/** Cold paths that load on first use (a lazy `import()` each): none may be in what loads up front. */
const COLD = [
  /node_modules\/(p-retry|eventsource-parser)\//,
  /dist\/(ref-tag|spend|error-body|network|submit-failure|rate-limit|cancel|snapshot|delta-run)-[A-Z0-9]+\.js$/,
];

/** Sources no engine's bundle may hold up front: the public event schemas, which the core does not use. */
const UNUSED_SOURCES = [/src\/event-schemas\.ts$/];

/** The source files a dist chunk was built from (its source map). */
const sourcesOf = (chunk) => {
  try {
    return JSON.parse(readFileSync(resolve(root, `${chunk}.map`), "utf8")).sources;
  } catch {
    return [];
  }
};

/**
 * Bundles `source` with code splitting (as an app's bundler does with lazy `import()`), and
 * measures what loads up front: the entry chunk and every chunk it imports statically.
 */
async function bundle(name, source) {
  const result = await build({
    stdin: { contents: source, resolveDir: root, sourcefile: `${name}.js` },
    bundle: true,
    splitting: true,
    outdir: resolve(root, ".size-check", name),
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
  const files = new Map(result.outputFiles.map((file) => [file.path, file.contents]));
  const outputs = result.metafile.outputs;
  // The app's own entry (a lazily imported chunk has an entryPoint too).
  const entry = Object.keys(outputs).find((path) => outputs[path].entryPoint === `${name}.js`);
  const upFront = new Set();
  const imports = [];
  const visit = (path) => {
    if (upFront.has(path)) return;
    upFront.add(path);
    for (const item of outputs[path].imports) {
      if (item.kind === "import-statement" && outputs[item.path]) visit(item.path);
      else if (item.external) imports.push(item);
    }
  };
  visit(entry);
  const code = Buffer.concat([...upFront].map((path) => Buffer.from(files.get(resolve(root, path)))));
  const inputs = [...upFront].flatMap((path) => Object.keys(outputs[path].inputs));
  return {
    min: code.length,
    gzip: gzipSync(code, { level: 9 }).length,
    imports,
    inputs,
    text: code.toString(),
  };
}

let failed = false;
const kb = (bytes) => (bytes / 1024).toFixed(2);

const { models } = await import("../dist/catalog.js");
/** Catalog entries an engine's bundle may hold besides its own: OpenRouter names Perplexity's as replacements. */
const alsoCatalog = { openrouter: ["perplexity"] };

const engines = ["openai", "gemini", "openrouter", "perplexity", "hosted"];
for (const engine of engines) {
  const one = await bundle(
    `core+${engine}`,
    `export { createSonde } from "./dist/core.js"; export { ${engine}Adapter } from "./dist/providers/${engine}.js";`,
  );
  const budget = BUDGET_KB[engine];
  const over = one.gzip > budget * 1024;
  if (over) failed = true;
  const goal = one.gzip <= GOAL_KB * 1024 ? `within the ${GOAL_KB} KB goal` : `over the ${GOAL_KB} KB goal`;
  console.log(
    `${over ? "FAIL" : "ok  "} core + ${engine}: ${kb(one.min)} KB min, ${kb(one.gzip)} KB min+gz, ${goal} (budget ${budget} KB, zod excluded)`,
  );
  const eager = [...one.inputs, ...one.inputs.flatMap(sourcesOf)].filter((input) =>
    [...COLD, ...UNUSED_SOURCES].some((pattern) => pattern.test(input)),
  );
  if (eager.length > 0) {
    failed = true;
    console.log(
      `FAIL core + ${engine} loads up front what loads on first use or is unused: ${eager.join(", ")}`,
    );
  }
  // The catalog is data: an app using one engine must not ship every engine's models.
  const foreign = models.filter(
    (m) =>
      m.provider !== engine && !alsoCatalog[engine]?.includes(m.provider) && one.text.includes(`"${m.id}"`),
  );
  if (foreign.length > 0) {
    failed = true;
    console.log(
      `FAIL core + ${engine} bundles other engines' catalog entries: ${foreign.map((m) => m.id).join(", ")}`,
    );
  }
}

const main = await bundle("main", `export { Sonde } from "./dist/index.js";`);
const builtins = main.imports.filter((i) => i.path.startsWith("node:") && i.kind === "import-statement");
console.log(`info main entry (every engine): ${kb(main.min)} KB min, ${kb(main.gzip)} KB min+gz`);
// The portable engine's research loop loads when a portable job first runs (providers/portable/adapter.ts).
if (main.text.includes("no new call was made after it")) {
  failed = true;
  console.log("FAIL main entry loads the portable research loop up front");
}
// Each engine's session code loads when a job of it first starts (src/lazy-engine.ts): a text only it holds.
const sessionCode = {
  "the Responses session (OpenAI, Perplexity)": "keep ending early; polling instead",
  "Gemini's session": "~created",
  "OpenRouter's session": "OpenRouter cannot resume a stream",
  "the hosted session": "answer named no job id",
  "the portable adapter": "could not claim idempotencyKey",
};
const eagerEngines = Object.keys(sessionCode).filter((name) => main.text.includes(sessionCode[name]));
if (eagerEngines.length > 0) {
  failed = true;
  console.log(`FAIL main entry loads engine code up front: ${eagerEngines.join(", ")}`);
} else console.log("ok   main entry loads no engine's session up front (each loads on first use)");
if (builtins.length > 0) {
  failed = true;
  console.log(`FAIL main entry imports Node built-ins statically: ${builtins.map((i) => i.path).join(", ")}`);
} else {
  const lazy = main.imports.filter((i) => i.path.startsWith("node:")).map((i) => i.path);
  console.log(
    `ok   main entry has no static Node built-in import (imported lazily: ${[...new Set(lazy)].join(", ") || "none"})`,
  );
}
if (failed) process.exit(1);
