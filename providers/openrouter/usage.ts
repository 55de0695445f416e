/**
 * OpenRouter's counts as a usage report. The split of reasoning from the completion is the
 * protocol's one rule (src/protocols/chat-completions/usage.ts); what is OpenRouter's is
 * the pricing: Perplexity's models price reasoning as internal reasoning (the catalog's
 * `internalReasoningPerM`).
 */
import type { ChatTokens } from "../../src/protocols/chat-completions/usage.js";
import type { UsageReport } from "../../src/provider.js";

export function usageReportOf(tokens: ChatTokens, internalReasoning: boolean): UsageReport {
  const report: UsageReport = { modelCalls: 1 };
  if (tokens.inputTokens !== undefined) report.inputTokens = tokens.inputTokens;
  if (tokens.outputTokens !== undefined) report.outputTokens = tokens.outputTokens;
  if (internalReasoning) report.internalReasoningTokens = tokens.reasoningTokens;
  else report.reasoningTokens = tokens.reasoningTokens;
  if (tokens.searches !== undefined) report.searches = tokens.searches;
  if (tokens.costUSD !== undefined) report.providerCostUSD = tokens.costUSD;
  return report;
}
