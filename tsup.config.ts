import { defineConfig } from "tsup";

const providers = ["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"];

export default defineConfig([
  {
    entry: {
      index: "src/index.ts",
      testing: "src/testing/index.ts",
      catalog: "catalog/index.ts",
      ...Object.fromEntries(providers.map((name) => [`providers/${name}`, `providers/${name}/index.ts`])),
    },
    format: ["esm", "cjs"],
    dts: true,
    clean: true,
    sourcemap: true,
    target: "node22",
    // msw is only used by sonde/testing and stays the user's own devDependency.
    external: ["msw", "msw/node", "zod"],
  },
  {
    entry: { cli: "src/cli/main.ts" },
    format: ["esm"],
    target: "node22",
    banner: { js: "#!/usr/bin/env node" },
    external: ["msw", "msw/node", "zod"],
  },
]);
