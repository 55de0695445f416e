/**
 * What OpenRouter sends beyond the Chat Completions protocol (whose chunks, usage and
 * error bodies are in src/protocols/chat-completions/): the generation endpoint's record.
 */
import { z } from "zod";

const count = z.number().nullish().catch(undefined);

/** `GET /generation?id=…` (post-hoc stats; the text itself is not retrievable). */
export const Generation = z.lazy(() =>
  z.object({
    data: z.object({
      id: z.string().nullish(),
      total_cost: count,
      tokens_prompt: count,
      tokens_completion: count,
      native_tokens_prompt: count,
      native_tokens_completion: count,
      native_tokens_reasoning: count,
      num_search_results: count,
      finish_reason: z.string().nullish(),
      cancelled: z.boolean().nullish(),
    }),
  }),
);
export type Generation = z.infer<typeof Generation>;
