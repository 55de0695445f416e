/**
 * validate() reports everything start() would, before the network: a request that
 * validates starts, and one that start() rejects fails validate() with the same error.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AuthenticationError, InvalidRequestError, Sonde, type SondeOptions } from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => clearMocks());

const cases: [string, Partial<SondeOptions>, string, abstract new (...args: never[]) => Error][] = [
  [
    "a search backend that is not one",
    // @ts-expect-error the settings type already refuses it; the run-time check is what is tested
    { portable: { search: 42 } },
    "portable:demo/offline",
    InvalidRequestError,
  ],
  ["no OpenAI key", {}, "openai:gpt-5.5-pro", AuthenticationError],
  ["no Gemini key", {}, "gemini:deep-research-preview-04-2026", AuthenticationError],
  ["no OpenRouter key", {}, "openrouter:perplexity/sonar-deep-research", AuthenticationError],
  [
    "no OpenRouter key for the portable chat",
    {},
    "portable:openrouter/openai/gpt-5-mini",
    AuthenticationError,
  ],
  [
    "no hosted base URL",
    { hosted: { apiKey: "sk-hosted-test-000" } },
    "hosted:agents.deep_research",
    InvalidRequestError,
  ],
];

describe("validate() throws what start() throws", () => {
  it.each(cases)("%s", (_name, options, model, type) => {
    const client = new Sonde({ env: {}, ...options });
    const request = {
      model,
      query: "q",
      ...(model.startsWith("portable:openrouter") && { sources: { urls: ["https://example.org/a"] } }),
    };
    const fromStart = (() => {
      try {
        client.research.start(request);
      } catch (error) {
        return error;
      }
    })();
    expect(fromStart).toBeInstanceOf(type); // synchronously, before any pull
    expect(() => client.research.validate(request)).toThrow(type);
    expect(() => client.research.validate(request)).toThrow((fromStart as Error).message);
  });

  it("the missing-key message names the environment variable", () => {
    const client = new Sonde({ env: {} });
    expect(() =>
      client.research.validate({ model: "gemini:deep-research-preview-04-2026", query: "q" }),
    ).toThrow(/GEMINI_API_KEY/);
  });

  it("a request a mock answers needs no key, in validate() as in start()", async () => {
    mockResearch("# Mocked").whenQueryContains("battery").register();
    const client = new Sonde({ env: {} });
    const request = { model: "gemini:deep-research-preview-04-2026", query: "battery rules" };
    expect(client.research.validate(request).provider).toBe("gemini");
    expect((await client.research.start(request).result()).report).toBe("# Mocked");
    expect(() => client.research.validate({ ...request, query: "other" })).toThrow(AuthenticationError);
  });
});
