#!/usr/bin/env node
// Packaging check, run by `npm test` after the build. It does what a new user does: packs
// the tarball, lints it (publint, @arethetypeswrong/cli), installs it into a fresh project
// outside the repo (so nothing resolves from the repo's node_modules) with only `zod` and
// `node@22` beside it, then imports AND requires every subpath in package.json's `exports`
// and runs user-style scripts as ESM and CJS. Packages come from the npm cache when present.
//
// New entries are covered automatically (the list comes from `exports`). An entry whose
// library is an optional peer goes in `optionalPeerEntries`: without the peer it must load,
// or fail with a message naming the peer; once the peer is installed it must load.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** Subpath → the optional peer it needs. Each peer must be an optional peerDependency. */
const optionalPeerEntries = {
  "./testing/msw": "msw",
  "./tracing": "@opentelemetry/api",
  "./redis": "ioredis",
  "./worker": "bullmq",
};

const fail = (message) => {
  console.error(`package check FAILED: ${message}`);
  process.exit(1);
};
for (const [entry, peer] of Object.entries(optionalPeerEntries)) {
  if (!pkg.exports[entry]) fail(`optionalPeerEntries names ${entry}, which package.json does not export`);
  if (!pkg.peerDependencies?.[peer] || pkg.peerDependenciesMeta?.[peer]?.optional !== true)
    fail(
      `${entry} needs ${peer}: declare it in peerDependencies and mark it optional in peerDependenciesMeta`,
    );
  if (!pkg.devDependencies?.[peer])
    fail(`${entry} needs ${peer}: pin it in devDependencies, the version checked here`);
}

const work = mkdtempSync(join(tmpdir(), "sonde-pack-"));
if (!relative(root, work).startsWith("..")) fail(`the temporary project ${work} is inside the repo`);
// Node resolves packages from every ancestor's node_modules: one there would make a package the
// project does not install (an optional peer) resolve anyway.
for (let dir = dirname(work); ; dir = dirname(dir)) {
  if (existsSync(join(dir, "node_modules"))) {
    rmSync(work, { recursive: true, force: true });
    fail(
      `${join(dir, "node_modules")} is above the temporary project ${work}: packages it holds would resolve there. Remove it, or point TMPDIR elsewhere.`,
    );
  }
  if (dirname(dir) === dir) break;
}
const bin = (name) => join(root, "node_modules", ".bin", name);
// The child npm must not inherit this run's project context (npm_config_local_prefix etc.).
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) =>
      !/^npm_(package_|lifecycle_|config_local_prefix|config_prefix|config_global_prefix)/.test(key) &&
      key !== "INIT_CWD",
  ),
);
const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: root, stdio: "inherit", ...options });
const npmInstall = (app, specs) =>
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", ...specs], {
    cwd: app,
    env,
  });

try {
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" }),
  );
  const tarball = join(work, packed.filename);
  console.log(`packed ${packed.filename}: ${packed.files.length} files, ${packed.size} bytes`);

  run(bin("publint"), ["run", "--strict", "--pack", "npm"]);
  // Every resolution mode, node10 included (typesVersions maps the subpaths there).
  run(bin("attw"), [tarball, "--format", "table-flipped"]);

  // Every file the README links to (the examples) ships in the package.
  const shipped = new Set(packed.files.map((file) => file.path));
  for (const [, target] of readFileSync(join(root, "README.md"), "utf8").matchAll(
    /\]\(((?!https?:|#)[^)\s]+)\)/g,
  )) {
    if (!shipped.has(target)) fail(`README links to ${target}, which is not in the package`);
  }

  const app = join(work, "app");
  mkdirSync(app);
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "user-app", private: true, type: "module", allowScripts: { node: true } }),
  );
  const started = Date.now();
  npmInstall(app, [tarball, `zod@${pkg.devDependencies.zod}`, `node@${pkg.devDependencies.node}`]);
  console.log(`installed the tarball, zod and node into ${app} in ${Date.now() - started} ms`);
  const node = join(app, "node_modules", ".bin", "node");
  const installed = JSON.parse(readFileSync(join(app, "node_modules", "sonde", "package.json"), "utf8"));

  // Every subpath a user can name, wildcards expanded from the files the tarball ships.
  const subpaths = [];
  for (const [key, target] of Object.entries(installed.exports)) {
    if (key === "./package.json") continue;
    if (!key.includes("*")) {
      subpaths.push(key);
      continue;
    }
    const pattern = target.import.default; // e.g. ./dist/providers/*.js
    const [dir, file] = [
      pattern.slice(0, pattern.lastIndexOf("/")),
      pattern.slice(pattern.lastIndexOf("/") + 1),
    ];
    const [before, after] = file.split("*");
    for (const name of readdirSync(join(app, "node_modules", "sonde", dir))) {
      if (name.startsWith(before) && name.endsWith(after))
        subpaths.push(key.replace("*", name.slice(before.length, name.length - after.length)));
    }
  }
  const specifiers = subpaths.map((key) => `sonde${key.slice(1)}`);
  console.log(`checking ${specifiers.length} subpaths: ${specifiers.join(", ")}`);

  const loadCheck = (load, peersInstalled) => `
const specifiers = ${JSON.stringify(specifiers)};
const optional = ${JSON.stringify(Object.fromEntries(Object.entries(optionalPeerEntries).map(([k, v]) => [`sonde${k.slice(1)}`, v])))};
const peersInstalled = ${peersInstalled};
let failed = false;
for (const specifier of specifiers) {
  try {
    const loaded = ${load};
    if (Object.keys(loaded).length === 0) { console.error("FAIL: " + specifier + " exports nothing"); failed = true; }
  } catch (error) {
    const peer = optional[specifier];
    const message = String(error?.message ?? error);
    if (peer && !peersInstalled && message.includes(peer)) continue;
    console.error("FAIL: " + specifier + " does not load: " + message);
    failed = true;
  }
}
if (failed) process.exit(1);
console.log("ok", process.argv[1].split("/").pop(), specifiers.length + " subpaths");
`;
  const loadEsm = (peersInstalled) =>
    `const check = async () => {${loadCheck("await import(specifier)", peersInstalled)}};\ncheck();`;
  const loadCjs = (peersInstalled) => loadCheck("require(specifier)", peersInstalled);

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
  // Without msw, the msw entry loads and its handlers say what to install.
  try { providerHandlers.openai(); fail("msw handlers built without msw"); }
  catch (e) { if (!MissingDependencyError.isInstance(e) || e.packageName !== "msw" || !/npm install .*msw/.test(e.message)) fail("wrong missing-msw error: " + e); }
  // Without @opentelemetry/api, sonde/tracing loads and sondeTracing() says what to install.
  try { sondeTracing(); fail("tracing built without @opentelemetry/api"); }
  catch (e) { if (!MissingDependencyError.isInstance(e) || e.packageName !== "@opentelemetry/api" || !/npm install @opentelemetry\\/api/.test(e.message)) fail("wrong missing-otel error: " + e); }
  console.log("ok", process.argv[1].split("/").pop());
};
run().catch((e) => fail(e.stack ?? String(e)));
`;
  const mswScenario = (load) => `
${load}
const fail = (message) => { console.error("FAIL: " + message); process.exit(1); };
const run = async () => {
  // Loopback base URL: even a handler that failed to match could not leave the machine.
  const baseURL = "http://127.0.0.1:49999/v1"; // nothing listens there
  const server = setupServer(...providerHandlers.openai({ baseURL, report: "From msw." }));
  server.listen({ onUnhandledRequest: "error" });
  try {
    const client = new Sonde({ openai: { apiKey: "sk-test-package-check", baseURL } });
    const result = await client.research.start({ model: "openai:gpt-5.5-pro", query: "q" }).result();
    if (result.report !== "From msw.") fail("msw report differs: " + JSON.stringify(result.report));
    // With the peer installed, sondeTracing() finds the global provider.
    if (typeof sondeTracing().observeJob !== "function") fail("sondeTracing() without a tracer failed");
  } finally { server.close(); }
  console.log("ok", process.argv[1].split("/").pop());
};
run().catch((e) => fail(e.stack ?? String(e)));
`;
  // The portable default fetcher loads undici, linkedom, Readability, pdf.js and the charset
  // sniffer on first use: from the installed tarball they must resolve under import and require.
  const fetcherScenario = (load) => `
${load}
const fail = (message) => { console.error("FAIL: " + message); process.exit(1); };
const pdf = (() => {
  const objects = ["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [5 0 R] /Count 1 >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"];
  const content = "BT /F1 12 Tf 72 720 Td (The packaged fetcher reads this PDF page.) Tj ET";
  objects.push("<< /Length " + content.length + " >>\\nstream\\n" + content + "\\nendstream");
  objects.push("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>");
  let out = "%PDF-1.4\\n";
  const offsets = objects.map((body, i) => { const at = out.length; out += (i + 1) + " 0 obj\\n" + body + "\\nendobj\\n"; return at; });
  const xref = out.length;
  out += "xref\\n0 " + (objects.length + 1) + "\\n0000000000 65535 f \\n" + offsets.map((o) => String(o).padStart(10, "0") + " 00000 n \\n").join("");
  return out + "trailer\\n<< /Size " + (objects.length + 1) + " /Root 1 0 R >>\\nstartxref\\n" + xref + "\\n%%EOF\\n";
})();
const article = "<html><head><title>Packaged</title></head><body><nav>Home News</nav><article><p>" +
  "The packaged fetcher keeps the article text of this page and drops its navigation. ".repeat(8) + "</p></article></body></html>";
const server = createServer((req, res) => {
  if (req.url === "/robots.txt") return res.writeHead(404).end();
  if (req.url === "/report.pdf") return res.writeHead(200, { "content-type": "application/pdf" }).end(pdf);
  res.writeHead(200, { "content-type": "text/html; charset=windows-1252" }).end(article);
});
const run = async () => {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = "http://127.0.0.1:" + server.address().port;
  try {
    const fetcher = defaultFetcher({ allowHosts: ["127.0.0.1"] });
    const signal = new AbortController().signal;
    const page = await fetcher.fetch(base + "/article", { signal });
    if (page.extraction !== "article" || page.text.includes("Home News") || page.encoding !== "windows-1252")
      fail("HTML not extracted: " + JSON.stringify(page).slice(0, 300));
    const report = await fetcher.fetch(base + "/report.pdf", { signal });
    if (report.extraction !== "pdf" || report.text !== "The packaged fetcher reads this PDF page.")
      fail("PDF not read: " + JSON.stringify(report));
    const refused = await fetcher.fetch("http://[::1]:9/", { signal }).then(() => undefined, (e) => e);
    if (refused?.name !== "FetchRefused") fail("loopback not refused: " + refused);
  } finally { server.close(); }
  console.log("ok", process.argv[1].split("/").pop());
};
run().catch((e) => fail(e.stack ?? String(e)));
`;
  const providers = subpaths.filter((key) => key.startsWith("./providers/")).map((key) => key.slice(12));
  const scripts = {
    "load.mjs": loadEsm(false),
    "load.cjs": loadCjs(false),
    "esm.mjs":
      scenario(`import { Sonde, ModelRetiredError, UnknownModelError, InvalidRefError, MissingDependencyError } from "sonde";
import { mockResearch, clearMocks } from "sonde/testing";
import { providerHandlers } from "sonde/testing/msw";
import { sondeTracing } from "sonde/tracing";
import { listModels } from "sonde/catalog";
const providerAdapters = {};
for (const name of ${JSON.stringify(providers)}) providerAdapters[name] = (await import("sonde/providers/" + name))[name + "Adapter"];`),
    "cjs.cjs":
      scenario(`const { Sonde, ModelRetiredError, UnknownModelError, InvalidRefError, MissingDependencyError } = require("sonde");
const { mockResearch, clearMocks } = require("sonde/testing");
const { providerHandlers } = require("sonde/testing/msw");
const { sondeTracing } = require("sonde/tracing");
const { listModels } = require("sonde/catalog");
const providerAdapters = Object.fromEntries(${JSON.stringify(providers)}
  .map((name) => [name, require("sonde/providers/" + name)[name + "Adapter"]]));`),
  };
  scripts["fetcher.mjs"] = fetcherScenario(`import { createServer } from "node:http";
import { defaultFetcher } from "sonde/providers/portable";`);
  scripts["fetcher.cjs"] = fetcherScenario(`const { createServer } = require("node:http");
const { defaultFetcher } = require("sonde/providers/portable");`);
  for (const [name, text] of Object.entries(scripts)) {
    writeFileSync(join(app, name), text);
    run(node, [name], { cwd: app });
  }

  // With the optional peers installed, every entry loads and the msw handlers serve a job.
  const peers = [...new Set(Object.values(optionalPeerEntries))];
  npmInstall(
    app,
    peers.map((peer) => `${peer}@${pkg.devDependencies[peer]}`),
  );
  const withPeers = {
    "load-peers.mjs": loadEsm(true),
    "load-peers.cjs": loadCjs(true),
    "msw.mjs": mswScenario(`import { setupServer } from "msw/node";
import { Sonde } from "sonde";
import { sondeTracing } from "sonde/tracing";
import { providerHandlers } from "sonde/testing/msw";`),
    "msw.cjs": mswScenario(`const { setupServer } = require("msw/node");
const { Sonde } = require("sonde");
const { sondeTracing } = require("sonde/tracing");
const { providerHandlers } = require("sonde/testing/msw");`),
  };
  for (const [name, text] of Object.entries(withPeers)) {
    writeFileSync(join(app, name), text);
    run(node, [name], { cwd: app });
  }

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
      env: { ...env, SONDE_STORE_DIR: join(work, "store") },
    },
  );
  if (!/^# /.test(report) || !report.includes("## Sources"))
    fail(`npx sonde research printed no report:\n${report}`);
  console.log("npx sonde research (portable:demo/offline): ok");
} catch (error) {
  fail(error.message);
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log("package check passed");
