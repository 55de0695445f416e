/**
 * The chat client for real endpoints: OpenAI-compatible `POST /chat/completions`,
 * non-streaming, through the shared HTTP client (typed errors, Retry-After). A call that
 * got a 429/5xx status line is retried under the client's retry policy; a call that got
 * no answer at all is not resent (it may have been billed).
 */

import { InvalidRequestError } from "../../src/errors.js";
import { readCompletion } from "../../src/protocols/chat-completions/completion.js";
import type { RetryPolicy } from "../../src/provider.js";
import { createHttpClient } from "../../src/transport/http.js";
import { withRetry } from "../../src/transport/retry.js";
import { MALFORMED_CHAT_RESPONSE } from "./errors.js";
import type { ChatModel, ChatResponse } from "./types.js";

export interface ChatEndpointOptions {
  /** Endpoint name from the model id, for messages. */
  name: string;
  baseURL: string;
  apiKey?: string | undefined;
  fetch: typeof globalThis.fetch;
  clock: () => Date;
  retry: RetryPolicy;
  /** Extra headers (OpenRouter app attribution). */
  headers?: Record<string, string | undefined>;
  /**
   * OpenAI's own endpoint takes `max_completion_tokens` (its reasoning models reject
   * `max_tokens`) and JSON mode; other compatible servers get `max_tokens` and a prompt-only
   * JSON contract, which every server understands.
   */
  flavor: "openai" | "openrouter" | "generic";
  /** Per-call timeout. @defaultValue 180_000 */
  timeoutMs?: number;
}

export function openAICompatibleChat(options: ChatEndpointOptions): ChatModel {
  const http = createHttpClient({
    provider: "portable",
    baseURL: options.baseURL,
    headers: {
      ...(options.apiKey && { authorization: `Bearer ${options.apiKey}` }),
      ...options.headers,
    },
    fetch: options.fetch,
    clock: options.clock,
    timeoutMs: options.timeoutMs ?? 180_000,
    // The body's readings (moderation, a model the endpoint does not serve, an outage it
    // says will not pass) come from the protocol's error schema, as for OpenRouter's engine.
    classify: async (failure) =>
      (await import("../../src/protocols/chat-completions/http-errors.js")).classifyChatFailure(failure, {
        provider: "portable",
        notServed: `The "${options.name}" chat endpoint does not serve this model: check the model name and that its baseURL points at an OpenAI-compatible API (…/v1).`,
      }),
  });
  return {
    async complete(request): Promise<ChatResponse> {
      const body: Record<string, unknown> = {
        model: request.model,
        messages: request.messages,
        ...(options.flavor === "openai"
          ? { max_completion_tokens: request.maxTokens }
          : { max_tokens: request.maxTokens }),
        ...(options.flavor !== "generic" && { response_format: { type: "json_object" } }),
      };
      const raw = await withRetry(
        () => http.post("chat/completions", { json: body, signal: request.signal }).json<unknown>(),
        {
          policy: options.retry,
          signal: request.signal,
          // Only a refusal with a status line proves the call was not processed.
          shouldRetry: (error) =>
            (error as { retryable?: unknown }).retryable === true &&
            typeof (error as { status?: unknown }).status === "number",
        },
      );
      const answer = readCompletion(raw);
      if (!answer) {
        throw new InvalidRequestError(
          `The "${options.name}" chat endpoint answered with something that is not a chat completion. ` +
            "Check that its baseURL points at an OpenAI-compatible API (…/v1).",
          { provider: "portable", providerCode: MALFORMED_CHAT_RESPONSE },
        );
      }
      const tokens = answer.tokens;
      return {
        content: answer.content,
        finishReason: answer.finishReason,
        inputTokens: tokens?.inputTokens,
        outputTokens: tokens?.outputTokens,
        reasoningTokens: tokens?.reasoningTokens ?? 0,
        costUSD: tokens?.costUSD,
      };
    },
  };
}
