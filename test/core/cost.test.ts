import { describe, expect, it } from "vitest";
import { findModel } from "../../catalog/index.js";
import type { Pricing } from "../../catalog/schema.js";
import { emptyUsage, estimateCost, mergeUsage } from "../../src/cost.js";

const zero = {
  inputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  internalReasoningTokens: 0,
  searches: 0,
  fetches: 0,
  modelCalls: 0,
};
const pricing = (p: Partial<Pricing>): Pricing => ({ inputPerM: 0, outputPerM: 0, verified: true, ...p });

describe("estimateCost", () => {
  it("gpt-5.5-pro: $30/M in, $180/M out (reasoning at the output price), $10 per 1,000 searches", () => {
    const p = findModel("openai:gpt-5.5-pro")!.pricing;
    // 60,506 in, 2,467 visible out, 20,416 reasoning, 14 searches:
    // 60506×30/1e6 = 1.81518; 2467×180/1e6 = 0.44406; 20416×180/1e6 = 3.67488; 14×10/1000 = 0.14
    expect(
      estimateCost(
        { ...zero, inputTokens: 60_506, outputTokens: 2_467, reasoningTokens: 20_416, searches: 14 },
        p,
      ),
    ).toBeCloseTo(6.07412, 6);
  });

  it("prices reasoning and internal reasoning separately when the catalog does", () => {
    const p = pricing({
      inputPerM: 2,
      outputPerM: 8,
      reasoningPerM: 3,
      internalReasoningPerM: 5,
      perThousandSearches: 5,
    });
    // 1e6×2/1e6 = 2; 1e5×8/1e6 = 0.8; 2e5×3/1e6 = 0.6; 4e5×5/1e6 = 2; 24×5/1000 = 0.12
    const usage = {
      ...zero,
      inputTokens: 1e6,
      outputTokens: 1e5,
      reasoningTokens: 2e5,
      internalReasoningTokens: 4e5,
      searches: 24,
    };
    expect(estimateCost(usage, p)).toBeCloseTo(5.52, 9);
  });

  it("internal reasoning falls back to the reasoning price, then the output price", () => {
    expect(
      estimateCost({ ...zero, internalReasoningTokens: 1e6 }, pricing({ outputPerM: 8, reasoningPerM: 3 })),
    ).toBe(3);
    expect(estimateCost({ ...zero, internalReasoningTokens: 1e6 }, pricing({ outputPerM: 8 }))).toBe(8);
  });

  it("charges only searches beyond the free allowance, fetches per thousand, and the per-request fee once", () => {
    const p = pricing({
      perThousandSearches: 14,
      freeSearches: 100,
      perThousandFetches: 2,
      perRequest: 0.018,
    });
    // (160 − 100) × 14/1000 = 0.84; 50 × 2/1000 = 0.1; + 0.018
    expect(estimateCost({ ...zero, searches: 160, fetches: 50 }, p)).toBeCloseTo(0.958, 9);
    expect(estimateCost({ ...zero, searches: 80 }, p)).toBeCloseTo(0.018, 9);
  });
});

describe("cached input", () => {
  it("cached tokens, a part of the input, are priced at the catalog's cached rate where it has one", () => {
    const pricing = { inputPerM: 2, cachedInputPerM: 0.5, outputPerM: 8, verified: false };
    const usage = { ...emptyUsage, inputTokens: 1_000_000, cachedInputTokens: 800_000 };
    // 200k fresh × $2/M + 800k cached × $0.50/M
    expect(estimateCost(usage, pricing)).toBeCloseTo(0.4 + 0.4, 6);
    // Without a cached rate, cached tokens cost what input costs.
    expect(estimateCost(usage, { ...pricing, cachedInputPerM: undefined })).toBeCloseTo(2, 6);
    // A cached count above the input count is capped by it.
    expect(estimateCost({ ...usage, cachedInputTokens: 5_000_000 }, pricing)).toBeCloseTo(0.5, 6);
  });
});

describe("mergeUsage", () => {
  const p = pricing({ inputPerM: 10, outputPerM: 40 });

  it("reports are cumulative: present counts replace, absent ones are kept, the estimate follows", () => {
    const first = mergeUsage(emptyUsage, { searches: 3 }, p);
    const second = mergeUsage(first, { inputTokens: 1_000_000, outputTokens: 100_000 }, p);
    expect(second).toMatchObject({ searches: 3, inputTokens: 1_000_000, outputTokens: 100_000 });
    expect(second.costUSD).toBe(14); // 10 + 4
    expect(second.costSource).toBe("estimate");
  });

  it("the provider's own charge wins and is not replaced by later estimates", () => {
    const charged = mergeUsage(
      emptyUsage,
      { inputTokens: 21, outputTokens: 1_480, providerCostUSD: 0.41 },
      p,
    );
    expect(charged).toMatchObject({ costUSD: 0.41, costSource: "provider" });
    const later = mergeUsage(charged, { searches: 30 }, p);
    expect(later).toMatchObject({ costUSD: 0.41, costSource: "provider", searches: 30 });
  });
});
