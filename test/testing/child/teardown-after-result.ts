/**
 * What a user's plain-Node test does (bundled with esbuild and run by node, outside vitest):
 * run a job against `providerHandlers.<engine>()` and close the msw server the moment
 * `result()` settles. Prints one `<engine> <status>` line per run; a crash exits non-zero.
 */
import { setupServer } from "msw/node";
import { Sonde } from "../../../src/index.js";
import { providerHandlers } from "../../../src/testing/msw/index.js";

const models = {
  openai: "openai:gpt-5.5-pro",
  gemini: "gemini:deep-research-preview-04-2026",
  openrouter: "openrouter:perplexity/sonar-deep-research",
  perplexity: "perplexity:medium",
  hosted: "hosted:agents.deep_research",
} as const;

const runs = Number(process.env.RUNS ?? 3);
for (const engine of Object.keys(models) as (keyof typeof models)[]) {
  for (let i = 0; i < runs; i++) {
    // A reserved name (RFC 6761): nothing resolves it, so only msw can answer.
    const baseURL = `https://mock.test/${engine}`;
    const server = setupServer(
      ...providerHandlers[engine]({
        baseURL,
        report: "Report [1].",
        citations: [{ url: "https://example.org/a" }],
      }),
    );
    server.listen({ onUnhandledFrame: "error" });
    const client = new Sonde({ [engine]: { apiKey: "test-key-000000", baseURL }, env: {} });
    const result = await client.research.start({ model: models[engine], query: "q" }).result();
    server.close(); // at once, as a test's afterEach would
    console.log(`${engine} ${result.status}`);
  }
}
