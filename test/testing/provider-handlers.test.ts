/**
 * `providerHandlers.<engine>()` from sonde/testing: msw handlers a user puts under
 * their own app. Each must drive the real adapter to the scripted report and sources.
 */
import { setupServer } from "msw/node";
import { afterEach, describe, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { providerHandlers } from "../../src/testing/msw/index.js";

const cases = [
  ["openai", "openai:gpt-5.5-pro"],
  ["gemini", "gemini:deep-research-preview-04-2026"],
  ["openrouter", "openrouter:perplexity/sonar-deep-research"],
  ["perplexity", "perplexity:medium"],
  ["hosted", "hosted:agents.deep_research"],
] as const;

describe("providerHandlers", () => {
  let server: ReturnType<typeof setupServer> | undefined;
  afterEach(() => server?.close());

  it.each(cases)("%s handlers run a real job to the scripted report", async (provider, model) => {
    const baseURL = `https://mock.test/${provider}`;
    const report = `Report from ${provider}: 電池 🔋 results [1].`;
    server = setupServer(
      ...providerHandlers[provider]({
        baseURL,
        report,
        citations: [{ url: "https://example.org/source", title: "Source" }],
        jobId: `job-${provider}`,
      }),
    );
    server.listen({ onUnhandledFrame: "error" });
    const client = new Sonde({
      [provider]: { apiKey: "test-key-000000", baseURL },
      retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
      env: {},
    });
    const job = client.research.start({ model, query: "What changed?" });
    const result = await job.result();
    expect(result.status).toBe("completed");
    expect(result.report).toContain(`Report from ${provider}: 電池 🔋 results`);
    expect(result.citations.map((c) => c.url)).toContain("https://example.org/source");
    expect(job.toRef().jobId).toBeTruthy();
  });

  it.each(cases)("%s handlers can script a failed submission", async (provider, model) => {
    const baseURL = `https://mock.test/${provider}`;
    server = setupServer(
      ...providerHandlers[provider]({
        baseURL,
        fail: { status: 401, body: { error: { message: "bad key" } } },
      }),
    );
    server.listen({ onUnhandledFrame: "error" });
    const client = new Sonde({ [provider]: { apiKey: "test-key-000000", baseURL }, env: {} });
    await expect(client.research.start({ model, query: "q" }).result()).rejects.toMatchObject({
      code: "authentication",
      status: 401,
    });
  });
});
