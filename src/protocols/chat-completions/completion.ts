/**
 * A non-streaming chat completion read once: the first choice's text (a string, or the
 * text parts of a content array) and the usage block counted by the common rule.
 */

import { UNCOMPILED } from "../../transport/fast-json.js";
import { type ChatTokens, chatTokensOf } from "./usage.js";
import { ChatCompletion } from "./wire.js";

export interface CompletionAnswer {
  content: string;
  finishReason: string | undefined;
  /** Undefined when the answer had no usage block. */
  tokens: ChatTokens | undefined;
}

/** The answer of a `chat.completion` body; undefined when the body is not one. */
export function readCompletion(body: unknown): CompletionAnswer | undefined {
  const parsed = ChatCompletion.safeParse(body, UNCOMPILED);
  if (!parsed.success) return undefined;
  const choice = parsed.data.choices?.[0];
  const content = choice?.message?.content;
  return {
    content: typeof content === "string" ? content : (content ?? []).map((part) => part.text ?? "").join(""),
    finishReason: choice?.finish_reason ?? undefined,
    tokens: parsed.data.usage ? chatTokensOf(parsed.data.usage) : undefined,
  };
}
