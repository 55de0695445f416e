/**
 * An option the model's engine cannot honour is refused with what to do: drop it, or the
 * engines (of this client) that take it.
 */
import { describe, expect, it } from "vitest";
import { Sonde, UnsupportedOptionError } from "../../src/index.js";

const client = new Sonde({
  env: {},
  gemini: { apiKey: "AIza-test-hint-0000" },
  openrouter: { apiKey: "sk-or-test-hint-0000" },
  perplexity: { apiKey: "pplx-test-hint-0000" },
});

describe("an unsupported option says what to do", () => {
  it.each([
    [
      "gemini:deep-research-preview-04-2026",
      { maxToolCalls: 3 },
      /cannot honour "maxToolCalls".* Drop it, or use an engine that takes it: openai, perplexity\./,
    ],
    [
      "openrouter:perplexity/sonar-deep-research",
      { tools: [{ type: "web_search" as const }] },
      /Drop it, or use an engine that takes it: openai, gemini, portable\./,
    ],
    [
      "perplexity:medium",
      { tools: [{ type: "web_search" as const }] },
      /cannot honour "tools".*openai, gemini, portable\./,
    ],
  ])("%s with %j", (model, option, hint) => {
    let error: unknown;
    try {
      client.research.validate({ model, query: "q", ...option });
    } catch (e) {
      error = e;
    }
    expect(UnsupportedOptionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(hint);
  });
});
