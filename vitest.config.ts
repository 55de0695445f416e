import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^sonde\/providers\/(.*)$/, replacement: here("./providers/$1/index.ts") },
      { find: /^sonde\/testing$/, replacement: here("./src/testing/index.ts") },
      { find: /^sonde\/catalog$/, replacement: here("./catalog/index.ts") },
      { find: /^sonde$/, replacement: here("./src/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    exclude: ["test/bench/**", "test/package/**", "node_modules/**"],
    testTimeout: 20_000,
    pool: "forks",
    benchmark: { include: ["test/bench/**/*.bench.ts"] },
  },
});
