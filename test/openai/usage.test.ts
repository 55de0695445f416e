/** OpenAI's prompt-cache counts reach the usage, and the estimate prices them at the cached rate. */
import { describe, expect, it } from "vitest";
import { createTestServer, sseFixture } from "../helpers/test-server.js";
import { BASE, makeClient, STREAMING_MODEL } from "./helpers.js";

createTestServer({
  // The recorded tools run: usage.input_tokens 6047, of them cached_tokens 2944 (o4-mini-deep-research).
  [`POST ${BASE}/responses`]: sseFixture("openai/tools.sse"),
});

describe("openai usage", () => {
  it("cached_tokens reach usage.cachedInputTokens and are priced at the cached rate, not the input rate", async () => {
    const result = await makeClient()
      .research.start({ model: STREAMING_MODEL, query: "q", tools: [{ type: "web_search" }] })
      .result();
    expect(result.usage).toMatchObject({
      inputTokens: 6047,
      cachedInputTokens: 2944,
      outputTokens: 215,
      reasoningTokens: 1408,
      costSource: "estimate",
    });
    // $2/M fresh input, $0.50/M cached input, $8/M output and reasoning (o4-mini-deep-research).
    expect(result.usage.costUSD).toBeCloseTo((3103 * 2 + 2944 * 0.5 + (215 + 1408) * 8) / 1e6, 6);
  });
});
