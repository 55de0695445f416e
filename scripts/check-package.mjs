#!/usr/bin/env node
// Packaging check, run by `npm test` after the build: packs the tarball a user would
// install, lints it (publint, @arethetypeswrong/cli: every subpath resolves with types
// under import and require), then runs user-style scripts against the installed tarball
// as ESM and as CJS.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const work = join(root, ".pack-check");
const bin = (name) => join(root, "node_modules", ".bin", name);
const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: root, stdio: "inherit", ...options });

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const [packed] = JSON.parse(
  execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" }),
);
const tarball = join(work, packed.filename);
console.log(`packed ${packed.filename}: ${packed.files.length} files, ${packed.size} bytes`);

// Every file the README links to (examples) ships in the package.
const readme = readFileSync(join(root, "README.md"), "utf8");
const shipped = new Set(packed.files.map((file) => file.path));
for (const [, target] of readme.matchAll(/\]\(((?!https?:|#)[^)\s]+)\)/g)) {
  if (!shipped.has(target)) throw new Error(`README links to ${target}, which is not in the package`);
}

run(bin("publint"), ["run", "--strict", "--pack", "npm"]);
// Every resolution mode, node10 included (typesVersions maps the subpaths there).
run(bin("attw"), [tarball, "--format", "table-flipped"]);

// Install the tarball the way a user's project would see it. Its dependencies resolve
// from this repo's node_modules (the app lives below the repo), so no network is needed.
const app = join(work, "app");
const installed = join(app, "node_modules", "sonde");
mkdirSync(installed, { recursive: true });
run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"]);
writeFileSync(join(app, "package.json"), JSON.stringify({ name: "user-app", private: true, type: "module" }));

const scenario = (load) => `
${load}
const fail = (message) => { console.error("FAIL: " + message); process.exit(1); };
const run = async () => {
  const report = "# Findings\\nSodium-ion cells reached 160 Wh/kg in 2025.";
  mockResearch(report, { citations: [{ url: "https://example.org/na-ion", title: "Na-ion" }], chunkSize: 7 })
    .whenQueryContains("sodium")
    .register();
  const client = new Sonde({ openai: { apiKey: "sk-test-package-check" } });
  const job = client.research.start({ model: "openai:gpt-5.5-pro", query: "Where is sodium-ion battery density?" });
  let ref;
  const types = [];
  for await (const event of job) {
    types.push(event.type);
    if (event.type === "text" && !ref) { ref = JSON.parse(JSON.stringify(job.toRef())); break; }
  }
  if (JSON.stringify(ref).includes("sk-test")) fail("ref contains the key");
  const attached = new Sonde({ openai: { apiKey: "sk-test-package-check" } }).research.attach(ref);
  const rest = [];
  for await (const event of attached) rest.push(event.type);
  const result = await attached.result();
  if (result.report !== report) fail("attached report differs: " + JSON.stringify(result.report));
  if (result.citations.length !== 1) fail("citations lost");
  if (rest.at(-1) !== "done") fail("no done event");
  const requests = [];
  const spy = new Sonde({ openai: { apiKey: "k" }, fetch: (...a) => { requests.push(a); throw new Error("no network"); },
    clock: () => new Date("2026-11-29") });
  try { spy.research.start({ model: "openai:o3-deep-research", query: "q" }); fail("retired model accepted"); }
  catch (e) { if (!ModelRetiredError.isInstance(e) || !/gpt-5\\.5-pro/.test(e.message)) fail("wrong retired error: " + e); }
  try { spy.research.start({ model: "openai:gpt-9", query: "q" }); fail("unknown model accepted"); }
  catch (e) { if (!UnknownModelError.isInstance(e) || e.suggestions.length === 0) fail("wrong unknown error: " + e); }
  if (requests.length) fail("a request was sent for an invalid model");
  const { jobId, ...noJobId } = ref;
  try { spy.research.attach(noJobId); fail("bad ref accepted"); }
  catch (e) { if (!InvalidRefError.isInstance(e) || e.field !== "jobId") fail("wrong ref error: " + e); }
  if (typeof listModels !== "function" || listModels({ provider: "gemini" }).length === 0) fail("sonde/catalog broken");
  for (const [name, adapter] of Object.entries(providerAdapters)) {
    if (adapter?.provider !== name) fail("sonde/providers/" + name + " does not export its adapter");
  }
  clearMocks();
  console.log("ok", process.argv[1].split("/").pop());
};
run().catch((e) => fail(e.stack ?? String(e)));
`;
writeFileSync(
  join(app, "esm.mjs"),
  scenario(`import { Sonde, ModelRetiredError, UnknownModelError, InvalidRefError } from "sonde";
import { mockResearch, clearMocks } from "sonde/testing";
import { listModels } from "sonde/catalog";
import { openaiAdapter } from "sonde/providers/openai";
import { geminiAdapter } from "sonde/providers/gemini";
import { openrouterAdapter } from "sonde/providers/openrouter";
import { perplexityAdapter } from "sonde/providers/perplexity";
import { hostedAdapter } from "sonde/providers/hosted";
import { portableAdapter } from "sonde/providers/portable";
const providerAdapters = { openai: openaiAdapter, gemini: geminiAdapter, openrouter: openrouterAdapter,
  perplexity: perplexityAdapter, hosted: hostedAdapter, portable: portableAdapter };`),
);
writeFileSync(
  join(app, "cjs.cjs"),
  scenario(`const { Sonde, ModelRetiredError, UnknownModelError, InvalidRefError } = require("sonde");
const { mockResearch, clearMocks } = require("sonde/testing");
const { listModels } = require("sonde/catalog");
const providerAdapters = Object.fromEntries(["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"]
  .map((name) => [name, require("sonde/providers/" + name)[name + "Adapter"]]));`),
);
for (const script of ["esm.mjs", "cjs.cjs"]) run(process.execPath, [script], { cwd: app });

// Subpaths type-check under moduleResolution node10 too (an older tsconfig), wildcard included.
writeFileSync(
  join(app, "node10.ts"),
  `import { Sonde, type ResearchRequest } from "sonde";
import { mockResearch } from "sonde/testing";
import { listModels } from "sonde/catalog";
import type { ResearchAdapter } from "sonde/provider";
import { openaiAdapter } from "sonde/providers/openai";
import { createFileStore } from "sonde/providers/portable";
const request: ResearchRequest = { model: "openai:gpt-5.5-pro", query: "q" };
const adapter: ResearchAdapter = openaiAdapter;
export const used = [Sonde, mockResearch, listModels, request, adapter, createFileStore];
`,
);
writeFileSync(
  join(app, "tsconfig.node10.json"),
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      moduleResolution: "node10",
      module: "commonjs",
      target: "es2022",
      lib: ["es2022", "dom"],
      types: [],
    },
    files: ["node10.ts"],
  }),
);
run(bin("tsc"), ["-p", "tsconfig.node10.json"], { cwd: app });

// The README's first command, from the installed package's bin, offline and with no key.
const binDir = join(app, "node_modules", ".bin");
mkdirSync(binDir, { recursive: true });
symlinkSync(join("..", "sonde", "dist", "cli.js"), join(binDir, "sonde"));
const report = execFileSync(
  "npx",
  [
    "--no-install",
    "sonde",
    "research",
    "How do deep research agents verify their citations?",
    "--model",
    "portable:demo/offline",
  ],
  {
    cwd: app,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SONDE_STORE_DIR: join(work, "store") },
  },
);
if (!/^# /.test(report) || !report.includes("## Sources"))
  throw new Error(`npx sonde research printed no report:\n${report}`);
console.log("npx sonde research (portable:demo/offline): ok");
rmSync(work, { recursive: true, force: true });
console.log("package check passed");
