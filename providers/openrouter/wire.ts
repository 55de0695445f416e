/**
 * OpenRouter chat-completion chunks as they come off the wire
 * (WIRE.md §4, §6). Minimal and lenient: only what the
 * mapper reads, every field optional, unknown keys ignored. Lists are parsed element
 * by element so that one odd annotation cannot hide the rest of a chunk.
 */
import { z } from "zod";

const count = z.number().nullish().catch(undefined);

export const UrlCitation = z.object({
  url: z.string(),
  title: z.string().nullish(),
  /** An excerpt OpenRouter adds when it has one. */
  content: z.string().nullish(),
  start_index: count,
  end_index: count,
});
export type UrlCitation = z.infer<typeof UrlCitation>;

export const Annotation = z.object({ type: z.string().nullish(), url_citation: UrlCitation.nullish() });

export const ReasoningDetail = z.object({
  type: z.string().nullish(),
  text: z.string().nullish(),
  summary: z.string().nullish(),
});

export const Delta = z.object({
  content: z.string().nullish(),
  reasoning: z.string().nullish(),
  reasoning_details: z.array(z.unknown()).nullish(),
  annotations: z.array(z.unknown()).nullish(),
});

export const Choice = z.object({
  delta: Delta.nullish(),
  finish_reason: z.string().nullish(),
  native_finish_reason: z.string().nullish(),
});

export const ChunkError = z.object({
  /** Documented as a number; one doc example shows a string. */
  code: z.union([z.number(), z.string()]).nullish(),
  message: z.string().nullish(),
  metadata: z
    .object({ error_type: z.string().nullish(), provider_code: z.unknown().optional() })
    .nullish()
    .catch(undefined),
});

const Availability = z
  .looseObject({ code: z.string().nullish(), retryable: z.boolean().nullish() })
  .nullish()
  .catch(undefined);

/**
 * An HTTP error body: `{"error": {code, message, metadata}}`; moderation refusals name `reasons`
 * and `flagged_input` in `metadata`, and an unroutable model carries an `availability` code
 * (WIRE.md §6), at the top level or inside `error`.
 */
export const ErrorBody = z.looseObject({
  error: z
    .looseObject({
      code: z.union([z.number(), z.string()]).nullish().catch(undefined),
      message: z.string().nullish().catch(undefined),
      metadata: z
        .looseObject({
          error_type: z.string().nullish().catch(undefined),
          reasons: z.unknown(),
          flagged_input: z.unknown(),
        })
        .nullish()
        .catch(undefined),
      availability: Availability,
    })
    .nullish()
    .catch(undefined),
  availability: Availability,
});

export const ChunkUsage = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  completion_tokens_details: z.object({ reasoning_tokens: count }).nullish().catch(undefined),
  /** OpenRouter credits (1 credit = 1 USD): what the caller is charged. */
  cost: count,
  server_tool_use: z.object({ web_search_requests: count }).nullish().catch(undefined),
});
export type ChunkUsage = z.infer<typeof ChunkUsage>;

export const Chunk = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z.array(Choice).nullish(),
  usage: ChunkUsage.nullish().catch(undefined),
  /** Top-level URL list OpenRouter has returned for Perplexity models (unconfirmed when streaming). */
  citations: z.array(z.string()).nullish().catch(undefined),
  error: ChunkError.nullish(),
});
export type Chunk = z.infer<typeof Chunk>;

/** `GET /generation?id=…` (post-hoc stats; the text itself is not retrievable). */
export const Generation = z.object({
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
});
export type Generation = z.infer<typeof Generation>;
