/**
 * The Responses `usage` block as Sonde counts it. Reasoning tokens are part of
 * `output_tokens` on the wire; Sonde counts them apart. Searches are not in `usage`
 * (OpenAI) or only in provider-specific details (Perplexity): the mapper counts them
 * and the provider's dialect may correct the count and add its charge.
 */
import type { UsageReport } from "../../provider.js";
import type { WireUsage } from "./wire.js";

/** What the mapper counted itself from items and events. */
export interface CountedUsage {
  searches: number;
  fetches: number;
}

export function tokenUsageOf(usage: WireUsage | null | undefined, counted: CountedUsage): UsageReport {
  const report: UsageReport = { searches: counted.searches };
  if (counted.fetches > 0) report.fetches = counted.fetches;
  if (usage) {
    const reasoning = usage.output_tokens_details?.reasoning_tokens ?? 0;
    report.inputTokens = usage.input_tokens ?? 0;
    // Prompt-cache hits, a part of input_tokens, priced at the catalog's cached rate.
    const cached = usage.input_tokens_details?.cached_tokens;
    if (typeof cached === "number" && cached > 0) report.cachedInputTokens = cached;
    report.outputTokens = Math.max(0, (usage.output_tokens ?? 0) - reasoning);
    report.reasoningTokens = reasoning;
  }
  return report;
}
