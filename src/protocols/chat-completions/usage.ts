/**
 * Chat Completions usage as Sonde counts it: output tokens without the reasoning tokens,
 * which Sonde counts apart. One rule for every chat-completions user (OpenRouter's stream
 * and its generation endpoint, the portable engine's chat endpoints), sources in
 * providers/openrouter/WIRE.md §4 "Reasoning inside or beside completion_tokens":
 *
 * - OpenAI counts reasoning inside `completion_tokens` (`completion_tokens_details` is
 *   a breakdown of it), and so do most compatible servers and OpenRouter's usual upstreams.
 * - xAI counts it beside: `completion_tokens` is the visible text only and
 *   `total_tokens = prompt + completion + reasoning`; some OpenRouter upstreams do too
 *   (reasoning larger than the whole completion count).
 *
 * So reasoning is beside the completion when the total says so, or, without a total
 * that says "inside", when it is larger than the completion count (it cannot be a part
 * of it); otherwise it is inside and taken off.
 */
import type { ChatUsage } from "./wire.js";

/** The counts of one completion, reasoning apart. */
export interface ChatTokens {
  inputTokens?: number;
  /** Completion tokens that are not reasoning. */
  outputTokens?: number;
  reasoningTokens: number;
  /** The provider's charge in USD (OpenRouter's `cost`, in credits of 1 USD). */
  costUSD?: number;
  /** Server-side web searches (OpenRouter's `server_tool_use`). */
  searches?: number;
}

/** The raw counts, as the usage block or OpenRouter's generation endpoint name them. */
export interface TokenCounts {
  prompt?: number | null | undefined;
  completion?: number | null | undefined;
  reasoning?: number | null | undefined;
  total?: number | null | undefined;
}

/** Whether `reasoning` is counted beside `completion` rather than inside it (see the header). */
export function reasoningBeside({ prompt, completion, reasoning, total }: TokenCounts): boolean {
  if (reasoning == null || reasoning <= 0 || completion == null) return false;
  if (total != null && prompt != null) {
    if (total === prompt + completion + reasoning) return true;
    if (total === prompt + completion) return false;
  }
  return reasoning > completion;
}

/** Output tokens without reasoning; undefined when the completion count is missing. */
export function outputTokensOf(counts: TokenCounts): number | undefined {
  const { completion } = counts;
  if (completion == null) return undefined;
  const reasoning = counts.reasoning ?? 0;
  return reasoningBeside(counts) ? completion : Math.max(0, completion - reasoning);
}

export function chatTokensOf(usage: ChatUsage): ChatTokens {
  const counts: TokenCounts = {
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    reasoning: usage.completion_tokens_details?.reasoning_tokens,
    total: usage.total_tokens,
  };
  const tokens: ChatTokens = { reasoningTokens: counts.reasoning ?? 0 };
  if (counts.prompt != null) tokens.inputTokens = counts.prompt;
  const output = outputTokensOf(counts);
  if (output !== undefined) tokens.outputTokens = output;
  if (usage.cost != null) tokens.costUSD = usage.cost;
  const searches = usage.server_tool_use?.web_search_requests;
  if (searches != null) tokens.searches = searches;
  return tokens;
}
