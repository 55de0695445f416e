import { defineConfig } from "vitest/config";

// The runtime contract tests (test/runtimes): the BUILT package on Node, Bun, Deno and workerd.
// `npm test` runs them after `npm run build`; no source aliases, so nothing resolves to src/.
export default defineConfig({
  test: {
    include: ["test/runtimes/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 180_000,
    setupFiles: ["test/setup/network-guard.ts"],
    pool: "forks",
  },
});
