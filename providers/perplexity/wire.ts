/**
 * Perplexity async chat completions as they come off the wire
 * (shared/providers/perplexity-async.md §2). Minimal and lenient: only what the mapper
 * reads, every field optional but the job's id and status, unknown keys ignored.
 */
import { z } from "zod";

const count = z.number().nullish().catch(undefined);

/** `CREATED` | `IN_PROGRESS` | `COMPLETED` | `FAILED`; kept open so a new status cannot break parsing. */
export const AsyncJob = z.object({
  id: z.string(),
  model: z.string().nullish(),
  status: z.string(),
  error_message: z.string().nullish(),
  /** A CompletionResponse, only when COMPLETED; parsed on its own (see `CompletionResponse`). */
  response: z.unknown().optional(),
});
export type AsyncJob = z.infer<typeof AsyncJob>;

export const SearchResult = z.object({
  url: z.string(),
  title: z.string().nullish(),
  snippet: z.string().nullish(),
  date: z.string().nullish(),
});
export type SearchResult = z.infer<typeof SearchResult>;

export const ReasoningStep = z.object({
  type: z.string().nullish(),
  thought: z.string().nullish(),
  web_search: z
    .object({ search_keywords: z.array(z.string()).nullish() })
    .nullish()
    .catch(undefined),
  fetch_url_content: z
    .object({ contents: z.array(z.unknown()).nullish() })
    .nullish()
    .catch(undefined),
});

export const CompletionUsage = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  /** Retrieved source text processed; billed at the input rate. */
  citation_tokens: count,
  num_search_queries: count,
  reasoning_tokens: count,
  cost: z.object({ total_cost: count }).nullish().catch(undefined),
});
export type CompletionUsage = z.infer<typeof CompletionUsage>;

export const CompletionResponse = z.object({
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z
          .object({ content: z.string().nullish(), reasoning_steps: z.array(z.unknown()).nullish() })
          .nullish(),
      }),
    )
    .nullish(),
  citations: z.array(z.string()).nullish().catch(undefined),
  search_results: z.array(z.unknown()).nullish().catch(undefined),
  usage: CompletionUsage.nullish().catch(undefined),
});
export type CompletionResponse = z.infer<typeof CompletionResponse>;
