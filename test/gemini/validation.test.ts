/**
 * What the Gemini engine accepts, decided before any network call: supported options
 * map onto the request, the rest is rejected with a typed error that says what to do.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listModels } from "../../catalog/index.js";
import { InvalidRequestError, Sonde, UnsupportedOptionError } from "../../src/index.js";
import type { ResearchAdapter } from "../../src/provider.js";
import { adapters } from "../../src/registry.js";
import { KEY } from "./helpers.js";

const model = "gemini:deep-research-preview-04-2026";
const fetched: string[] = [];
const offline = new Sonde({
  gemini: { apiKey: KEY },
  openai: { apiKey: "sk-test-gemini-validation" },
  openrouter: { apiKey: "sk-or-test-gemini-validation" },
  perplexity: { apiKey: "pplx-test-gemini-validation" },
  env: {},
  fetch: async (input) => {
    fetched.push(String(input));
    throw new Error("no network in validation tests");
  },
});

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

// Only for engines not built into this checkout: an adapter that would accept previousJobId,
// so that the catalog's followUps check is what must stop the request.
const permissive = (provider: "openai" | "openrouter" | "perplexity"): ResearchAdapter => ({
  specVersion: 1,
  provider,
  models: listModels({ provider }),
  supports: ["instructions", "tools", "reasoning", "previousJobId"],
  start() {
    throw new Error("network would start here");
  },
  attach() {
    throw new Error("unused");
  },
  get: async () => {
    throw new Error("unused");
  },
  cancel: async () => {
    throw new Error("unused");
  },
});

describe("gemini: validation before the network", () => {
  const saved = { ...adapters };
  beforeEach(() => {
    fetched.length = 0;
    adapters.openai ??= permissive("openai");
    adapters.openrouter ??= permissive("openrouter");
    adapters.perplexity ??= permissive("perplexity");
  });
  afterEach(() => {
    for (const key of Object.keys(adapters)) delete adapters[key as keyof typeof adapters];
    Object.assign(adapters, saved);
    expect(fetched).toEqual([]);
  });

  it("previousJobId is accepted by the Gemini agents (catalog followUps) and rejected before the network by engines without follow-ups", () => {
    expect(offline.research.validate({ model, query: "q", previousJobId: "v1_prev" }).previousJobId).toBe(
      "v1_prev",
    );
    const withoutFollowUps = listModels().filter(
      (info) =>
        !info.capabilities.followUps &&
        info.lifecycle.stage !== "retired" &&
        ["openai", "openrouter", "perplexity"].includes(info.provider),
    );
    expect(withoutFollowUps.map((info) => info.provider)).toContain("openrouter");
    for (const info of withoutFollowUps) {
      const error = thrown(() =>
        offline.research.start({ model: info.id, query: "q", previousJobId: "v1_prev" }),
      );
      expect(UnsupportedOptionError.isInstance(error), info.id).toBe(true);
      expect((error as UnsupportedOptionError).option, info.id).toBe("previousJobId");
    }
    // OpenAI's deep research models without follow-ups are retired; they fail even earlier.
    expect(() =>
      offline.research.start({ model: "openai:o4-mini-deep-research", query: "q", previousJobId: "resp_1" }),
    ).toThrow(/retired/);
  });

  it("timeoutMs above Gemini's 60-minute cap is clamped, and validate() shows the adjustment", () => {
    const resolved = offline.research.validate({ model, query: "q", timeoutMs: 3 * 3_600_000 });
    expect(resolved.timeoutMs).toBe(3_600_000);
    expect(resolved.adjustments).toEqual([
      {
        option: "timeoutMs",
        requested: 10_800_000,
        applied: 3_600_000,
        reason: expect.stringContaining("3600000"),
      },
    ]);
    expect(offline.research.validate({ model, query: "q", timeoutMs: 600_000 }).adjustments).toEqual([]);
  });

  it("local source restrictions, documents and budgets are rejected with a pointer to the portable engine", () => {
    for (const extra of [
      { sources: { allowDomains: ["europa.eu"] } },
      { sources: { documents: [{ text: "our memo" }] } },
      { budget: { searches: 5 } },
      { budget: { deadlineMs: 60_000 } },
    ]) {
      const error = thrown(() => offline.research.validate({ model, query: "q", ...extra }));
      expect(UnsupportedOptionError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/portable engine/);
    }
  });

  it("idempotency keys and maxToolCalls, which the Interactions API has no field for, are rejected, never dropped", () => {
    for (const [option, extra] of [
      ["idempotencyKey", { idempotencyKey: "order-42" }],
      ["maxToolCalls", { maxToolCalls: 10 }],
    ] as const) {
      const error = thrown(() => offline.research.start({ model, query: "q", ...extra }));
      expect(UnsupportedOptionError.isInstance(error), option).toBe(true);
      expect((error as UnsupportedOptionError).option).toBe(option);
    }
  });

  it("a thought-summary level Gemini cannot produce is rejected; 'auto' and includeThinking are fine", () => {
    const error = thrown(() =>
      offline.research.validate({ model, query: "q", reasoning: { summary: "detailed" } }),
    );
    expect(UnsupportedOptionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/includeThinking: false/);
    expect(() =>
      offline.research.validate({
        model,
        query: "q",
        reasoning: { summary: "auto", includeThinking: false },
      }),
    ).not.toThrow();
  });

  it("file_search needs File Search store names, not another provider's vector store ids", () => {
    const error = thrown(() =>
      offline.research.validate({
        model,
        query: "q",
        tools: [{ type: "file_search", vectorStoreIds: ["vs_abc123"] }],
      }),
    );
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("fileSearchStores/");
  });
});
