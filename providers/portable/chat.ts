/**
 * The chat client for real endpoints: OpenAI-compatible `POST /chat/completions`,
 * non-streaming, through the shared ky client (typed errors, Retry-After). A call that
 * got a 429/5xx status line is retried under the client's retry policy; a call that got
 * no answer at all is not resent (it may have been billed).
 */
import { InvalidRequestError } from "../../src/errors.js";
import type { RetryPolicy } from "../../src/provider.js";
import { createHttpClient } from "../../src/transport/http.js";
import { withRetry } from "../../src/transport/retry.js";
import { MALFORMED_CHAT_RESPONSE } from "./errors.js";
import type { ChatModel, ChatResponse } from "./types.js";
import { ChatCompletion } from "./wire/chat-completion.js";

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
      const parsed = ChatCompletion.safeParse(raw);
      if (!parsed.success) {
        throw new InvalidRequestError(
          `The "${options.name}" chat endpoint answered with something that is not a chat completion. ` +
            "Check that its baseURL points at an OpenAI-compatible API (…/v1).",
          { provider: "portable", providerCode: MALFORMED_CHAT_RESPONSE },
        );
      }
      return toChatResponse(parsed.data);
    },
  };
}

function toChatResponse(completion: ChatCompletion): ChatResponse {
  const choice = completion.choices?.[0];
  const content = choice?.message?.content;
  const text =
    typeof content === "string" ? content : (content ?? []).map((part) => part.text ?? "").join("");
  const usage = completion.usage;
  const prompt = usage?.prompt_tokens ?? undefined;
  const completionTokens = usage?.completion_tokens ?? undefined;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens ?? 0;
  // OpenAI counts reasoning inside completion_tokens; some servers (xAI) count it apart,
  // which shows as total = prompt + completion + reasoning.
  const separate =
    usage?.total_tokens != null &&
    prompt !== undefined &&
    completionTokens !== undefined &&
    reasoning > 0 &&
    usage.total_tokens === prompt + completionTokens + reasoning;
  const output =
    completionTokens === undefined
      ? undefined
      : separate
        ? completionTokens
        : Math.max(0, completionTokens - reasoning);
  return {
    content: text,
    finishReason: choice?.finish_reason ?? undefined,
    inputTokens: prompt,
    outputTokens: output,
    reasoningTokens: reasoning,
    costUSD: usage?.cost ?? undefined,
  };
}
