import type { Pricing } from "../catalog/schema.js";
import type { Usage } from "./events.js";
import type { UsageReport } from "./provider.js";

export const emptyUsage: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  internalReasoningTokens: 0,
  searches: 0,
  fetches: 0,
  modelCalls: 0,
  costUSD: 0,
  costSource: "estimate",
});

/**
 * Folds a cumulative usage report into the previous snapshot: counts the report
 * carries replace the old ones (reports are cumulative), absent counts are kept.
 * Once a provider charge has been seen it is kept over later estimates.
 */
export function mergeUsage(previous: Usage, report: UsageReport, pricing: Pricing): Usage {
  const next: Usage = { ...previous };
  for (const key of [
    "inputTokens",
    "cachedInputTokens",
    "outputTokens",
    "reasoningTokens",
    "internalReasoningTokens",
    "searches",
    "fetches",
    "modelCalls",
  ] as const) {
    const value = report[key];
    if (typeof value === "number" && Number.isFinite(value)) next[key] = value;
  }
  if (typeof report.providerCostUSD === "number" && Number.isFinite(report.providerCostUSD)) {
    next.costUSD = report.providerCostUSD;
    next.costSource = "provider";
  } else if (previous.costSource !== "provider") {
    const given = report.estimatedCostUSD;
    next.costUSD = typeof given === "number" && Number.isFinite(given) ? given : estimateCost(next, pricing);
    next.costSource = "estimate";
  }
  return next;
}

/**
 * Catalog-price estimate in USD. Token counts are disjoint: `outputTokens` excludes
 * reasoning, so each dimension is priced once. Cached input (a part of `inputTokens`) is
 * priced at `cachedInputPerM` where the catalog has one. Reasoning falls back to the output
 * price; searches beyond `freeSearches` are charged per thousand; `perRequest` once.
 * @example
 * ```ts
 * import { estimateCost } from "sonde";
 * import { findModel } from "sonde/catalog";
 *
 * const usd = estimateCost(
 *   { inputTokens: 20_000, outputTokens: 4_000, reasoningTokens: 0, internalReasoningTokens: 0, searches: 12, fetches: 0, modelCalls: 1 },
 *   findModel("openai:gpt-5.5-pro")!.pricing,
 * );
 * ```
 */
export function estimateCost(usage: Omit<Usage, "costUSD" | "costSource">, pricing: Pricing): number {
  const perM = (tokens: number, price: number) => (tokens * price) / 1_000_000;
  const billableSearches = Math.max(0, usage.searches - (pricing.freeSearches ?? 0));
  const cached = Math.min(usage.inputTokens, usage.cachedInputTokens ?? 0);
  const cost =
    perM(usage.inputTokens - cached, pricing.inputPerM) +
    perM(cached, pricing.cachedInputPerM ?? pricing.inputPerM) +
    perM(usage.outputTokens, pricing.outputPerM) +
    perM(usage.reasoningTokens, pricing.reasoningPerM ?? pricing.outputPerM) +
    perM(
      usage.internalReasoningTokens,
      pricing.internalReasoningPerM ?? pricing.reasoningPerM ?? pricing.outputPerM,
    ) +
    (billableSearches * (pricing.perThousandSearches ?? 0)) / 1000 +
    (usage.fetches * (pricing.perThousandFetches ?? 0)) / 1000 +
    (pricing.perRequest ?? 0);
  // Cents are not meaningful below a millionth of a dollar; keep floats tidy for display and tests.
  return Math.round(cost * 1e6) / 1e6;
}
