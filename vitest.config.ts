import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests never write into the user's home: default portable stores land in a scratch home.
const scratchHome = join(tmpdir(), "sonde-test-home");
mkdirSync(scratchHome, { recursive: true, mode: 0o700 });

export default defineConfig({
  // Lua scripts load as text, as tsup's loader bundles them.
  plugins: [
    {
      name: "lua-as-text",
      transform(code, id) {
        return id.endsWith(".lua")
          ? { code: `export default ${JSON.stringify(code)};`, map: null }
          : undefined;
      },
    },
  ],
  resolve: {
    alias: [
      { find: /^sonde\/providers\/(.*)$/, replacement: here("./providers/$1/index.ts") },
      { find: /^sonde\/testing\/msw$/, replacement: here("./src/testing/msw/index.ts") },
      { find: /^sonde\/testing$/, replacement: here("./src/testing/index.ts") },
      { find: /^sonde\/redis$/, replacement: here("./src/redis/index.ts") },
      { find: /^sonde\/worker$/, replacement: here("./src/worker/index.ts") },
      { find: /^sonde\/catalog$/, replacement: here("./catalog/index.ts") },
      { find: /^sonde\/core$/, replacement: here("./src/core.ts") },
      { find: /^sonde\/provider$/, replacement: here("./src/provider-entry.ts") },
      { find: /^sonde$/, replacement: here("./src/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // test/runtimes runs the built package on Bun, Deno and workerd: after the build (vitest.runtimes.config.ts).
    exclude: ["test/bench/**", "test/runtimes/**", "node_modules/**"],
    // Benchmarks run only with `npm run bench` (vitest's dedicated benchmark project).
    benchmark: { include: ["test/bench/**/*.bench.ts"] },
    testTimeout: 20_000,
    // Tests reach loopback only; the guard fails a test that tries anything else.
    setupFiles: ["test/setup/network-guard.ts"],
    pool: "forks",
    env: { HOME: scratchHome, USERPROFILE: scratchHome },
  },
});
