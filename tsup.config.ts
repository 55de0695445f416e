import { defineConfig, type Options } from "tsup";

const providers = ["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"];

const shared: Options = {
  entry: {
    index: "src/index.ts",
    testing: "src/testing/index.ts",
    catalog: "catalog/index.ts",
    redis: "src/redis/index.ts",
    worker: "src/worker/index.ts",
    ...Object.fromEntries(providers.map((name) => [`providers/${name}`, `providers/${name}/index.ts`])),
  },
  dts: true,
  sourcemap: true,
  target: "node22",
  // msw is only used by sonde/testing and stays the user's own devDependency; zod is a peer,
  // ioredis and bullmq optional peers of sonde/redis and sonde/worker.
  external: ["msw", "msw/node", "zod", "ioredis", "bullmq"],
  // sonde/redis's Lua scripts are bundled as strings.
  loader: { ".lua": "text" },
};

export default defineConfig([
  { ...shared, format: ["esm"] },
  {
    ...shared,
    format: ["cjs"],
    // ky, p-retry and eventsource-parser ship ESM only; bundling them keeps `require("sonde")`
    // free of require(esm) interop (a default export seen through a namespace object).
    noExternal: ["ky", "p-retry", "eventsource-parser", "is-network-error"],
  },
  {
    entry: { cli: "src/cli/main.ts" },
    format: ["esm"],
    target: "node22",
    banner: { js: "#!/usr/bin/env node" },
    external: ["msw", "msw/node", "zod"],
  },
]);
