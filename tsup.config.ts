import { defineConfig, type Options } from "tsup";

const providers = ["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"];

const shared: Options = {
  entry: {
    index: "src/index.ts",
    core: "src/core.ts",
    testing: "src/testing/index.ts",
    "testing/msw": "src/testing/msw/index.ts",
    catalog: "catalog/index.ts",
    provider: "src/provider-entry.ts",
    redis: "src/redis/index.ts",
    worker: "src/worker/index.ts",
    tracing: "src/tracing/index.ts",
    // Not a public entry: being one keeps the event schemas in a chunk of their own, so a bundle
    // that does not use them (the core does not) drops them (scripts/check-size.mjs checks it).
    "event-schemas": "src/event-schemas.ts",
    ...Object.fromEntries(providers.map((name) => [`providers/${name}`, `providers/${name}/index.ts`])),
  },
  dts: true,
  sourcemap: true,
  // Whitespace and syntax only: a cold import parses about a third less, and identifiers keep
  // their names, so stack traces stay readable (the source maps lead back to src/).
  minifyWhitespace: true,
  minifySyntax: true,
  target: "node22",
  // Keep `node:` on the lazily loaded built-ins: Deno, Bun and Workers resolve them only so.
  removeNodeProtocol: false,
  // msw (an optional peer, loaded by sonde/testing/msw on first use) and zod are the user's;
  // @opentelemetry/api, ioredis and bullmq are optional peers that only sonde/tracing,
  // sonde/redis and sonde/worker import.
  external: ["msw", "msw/node", "zod", "@opentelemetry/api", "ioredis", "bullmq"],
  // sonde/redis's Lua scripts are bundled as strings.
  loader: { ".lua": "text" },
};

export default defineConfig([
  {
    ...shared,
    format: ["esm"],
    // Bundled so that only SHA-256 is kept: loading @noble/hashes/sha2.js as a module builds its
    // SHA-512 tables (BigInt) at import, several ms of every cold `import("sonde")`.
    noExternal: ["@noble/hashes"],
  },
  {
    ...shared,
    format: ["cjs"],
    // p-retry, eventsource-parser and @noble/hashes ship ESM only; bundling them keeps `require("sonde")`
    // free of require(esm) interop (a default export seen through a namespace object).
    noExternal: ["p-retry", "eventsource-parser", "is-network-error", "@noble/hashes"],
  },
  {
    entry: { cli: "src/cli/main.ts" },
    format: ["esm"],
    target: "node22",
    banner: { js: "#!/usr/bin/env node" },
    external: ["msw", "msw/node", "zod"],
  },
]);
