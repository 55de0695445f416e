/** OpenAI's prompt-cache counts reach the usage, and the estimate prices them at the cached rate. */
import { describe, expect, it } from "vitest";
import { findModel } from "../../catalog/index.js";
import { usageOf } from "../../providers/openai/map.js";
import { emptyUsage, mergeUsage } from "../../src/cost.js";

describe("openai usage", () => {
  it("an OpenAI response's cached_tokens reach the usage and lower the estimate", () => {
    const report = usageOf(
      {
        input_tokens: 6047,
        input_tokens_details: { cached_tokens: 2944 },
        output_tokens: 1623,
        output_tokens_details: { reasoning_tokens: 1408 },
      },
      0,
    );
    expect(report).toMatchObject({ inputTokens: 6047, cachedInputTokens: 2944, outputTokens: 215 });
    const o4mini = findModel("openai:o4-mini-deep-research")!.pricing;
    const usage = mergeUsage(emptyUsage, report, o4mini);
    expect(usage.costUSD).toBeCloseTo((3103 * 2 + 2944 * 0.5 + 215 * 8 + 1408 * 8) / 1e6, 6);
  });
});
