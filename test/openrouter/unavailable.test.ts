/**
 * After Perplexity's Sonar sunset OpenRouter may stop routing `perplexity/sonar-*`
 * (unconfirmed): its "no endpoints" answers become ModelUnavailableError naming the
 * Agent API presets, and the catalog marks those entries' lifecycle unconfirmed.
 */
import { describe, expect, it } from "vitest";
import { findModel } from "../../catalog/index.js";
import { ModelUnavailableError, Sonde } from "../../src/index.js";

const model = "openrouter:perplexity/sonar-deep-research";

function clientAnswering(status: number, body: unknown) {
  let posts = 0;
  const fetch: typeof globalThis.fetch = async () => {
    posts++;
    return Response.json(body, { status });
  };
  const client = new Sonde({
    openrouter: { apiKey: "sk-or-test-0123456789", baseURL: "https://openrouter.test/api/v1" },
    fetch,
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    env: {},
  });
  return { client, posts: () => posts };
}

describe("OpenRouter's Perplexity models after the Sonar sunset", () => {
  it.each([
    [
      "a 404 'No endpoints found'",
      404,
      { error: { code: 404, message: "No endpoints found for perplexity/sonar-deep-research." } },
    ],
    [
      "an availability code no_endpoints",
      404,
      {
        error: {
          code: 404,
          message: "No allowed providers are available for the selected model.",
          availability: {
            code: "no_endpoints",
            retryable: false,
            requested_models: ["perplexity/sonar-deep-research"],
          },
        },
        availability: { code: "no_endpoints", retryable: false },
      },
    ],
    [
      "a 200 JSON error body instead of a stream",
      200,
      { error: { code: 404, message: "No endpoints found for perplexity/sonar-deep-research." } },
    ],
  ])(
    "%s is ModelUnavailableError naming perplexity:medium and perplexity:high, sent once",
    async (_, status, body) => {
      const { client, posts } = clientAnswering(status, body);
      const error = await client.research
        .start({ model, query: "q" })
        .result()
        .catch((e: unknown) => e);
      expect(ModelUnavailableError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        code: "model_unavailable",
        model,
        alternatives: ["perplexity:medium", "perplexity:high"],
        retryable: false,
      });
      expect((error as Error).message).toContain('Use "perplexity:medium" or "perplexity:high" instead.');
      expect(posts()).toBe(1);
    },
  );

  it("a busy model (retryable availability, 503) is not mistaken for a gone one", async () => {
    const { client } = clientAnswering(503, {
      error: {
        code: 503,
        message: "capacity exhausted",
        availability: { code: "capacity_exhausted", retryable: true },
      },
    });
    const error = await client.research
      .start({ model, query: "q" })
      .result()
      .catch((e: unknown) => e);
    expect(ModelUnavailableError.isInstance(error)).toBe(false);
  });

  it("marks the Perplexity entries' lifecycle unconfirmed, with the Agent API as replacement", () => {
    for (const id of [model, "openrouter:perplexity/sonar-pro-search"]) {
      expect(findModel(id)!.lifecycle).toMatchObject({
        stage: "deprecated",
        verified: false,
        replacement: "perplexity:medium",
      });
      expect(findModel(id)!.lifecycle.notes).toMatch(/unconfirmed/);
      expect(findModel(id)!.lifecycle.shutdownAt).toBeUndefined();
    }
  });
});
