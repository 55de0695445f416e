/**
 * OpenAI-compatible Chat Completions as they come off the wire: the streamed chunk
 * (OpenRouter, providers/openrouter/WIRE.md §4, §6) and the non-streaming completion (the
 * portable engine's chat endpoints). Minimal and lenient: only what Sonde reads, every
 * field optional, unknown keys ignored. Lists whose elements vary by upstream
 * (annotations, reasoning details) stay `unknown[]` and are read element by element
 * (chunks.ts), so that one odd element cannot hide the rest of a chunk.
 */
import { z } from "zod";
import { ErrorObject } from "./errors.js";

/** A count that is dropped (not fatal) when it is not a number. */
const count = z.number().nullish().catch(undefined);

export const UrlCitation = z.lazy(() =>
  z.object({
    url: z.string(),
    title: z.string().nullish(),
    /** An excerpt OpenRouter adds when it has one. */
    content: z.string().nullish(),
    start_index: count,
    end_index: count,
  }),
);
export type UrlCitation = z.infer<typeof UrlCitation>;

export const Annotation = z.lazy(() =>
  z.object({ type: z.string().nullish(), url_citation: UrlCitation.nullish() }),
);

export const ReasoningDetail = z.lazy(() =>
  z.object({
    type: z.string().nullish(),
    text: z.string().nullish(),
    summary: z.string().nullish(),
  }),
);

/**
 * The `usage` block, streamed (last chunk) or not. `completion_tokens` includes the
 * reasoning tokens on most servers and not on some: usage.ts decides which.
 */
export const ChatUsage = z.lazy(() =>
  z.object({
    prompt_tokens: count,
    completion_tokens: count,
    total_tokens: count,
    completion_tokens_details: z.object({ reasoning_tokens: count }).nullish().catch(undefined),
    /** OpenRouter credits (1 credit = 1 USD): what the caller is charged. */
    cost: count,
    server_tool_use: z.object({ web_search_requests: count }).nullish().catch(undefined),
  }),
);
export type ChatUsage = z.infer<typeof ChatUsage>;

export const Delta = z.lazy(() =>
  z.object({
    content: z.string().nullish(),
    reasoning: z.string().nullish(),
    reasoning_details: z.array(z.unknown()).nullish(),
    annotations: z.array(z.unknown()).nullish(),
  }),
);
export type Delta = z.infer<typeof Delta>;

export const Choice = z.lazy(() =>
  z.object({
    delta: Delta.nullish(),
    finish_reason: z.string().nullish(),
    native_finish_reason: z.string().nullish(),
  }),
);

/** One streamed `chat.completion.chunk`. */
export const Chunk = z.lazy(() =>
  z.object({
    id: z.string().nullish(),
    model: z.string().nullish(),
    choices: z.array(Choice).nullish(),
    usage: ChatUsage.nullish().catch(undefined),
    /** Top-level URL list OpenRouter has returned for Perplexity models (unconfirmed when streaming). */
    citations: z.array(z.string()).nullish().catch(undefined),
    /** A mid-stream failure (the HTTP status was already 200). */
    error: ErrorObject.nullish(),
  }),
);
export type Chunk = z.infer<typeof Chunk>;

const ContentPart = z.lazy(() => z.object({ type: z.string().nullish(), text: z.string().nullish() }));

/** The non-streaming `POST /chat/completions` answer. */
export const ChatCompletion = z.lazy(() =>
  z.object({
    id: z.string().nullish(),
    model: z.string().nullish(),
    choices: z
      .array(
        z.object({
          message: z.object({ content: z.union([z.string(), z.array(ContentPart)]).nullish() }).nullish(),
          finish_reason: z.string().nullish(),
        }),
      )
      .nullish(),
    usage: ChatUsage.nullish().catch(undefined),
  }),
);
export type ChatCompletion = z.infer<typeof ChatCompletion>;
