/**
 * One model call of a step, parsed against the task's output schema; a malformed answer
 * is retried once if the budget allows.
 *
 * Reads receipts: `model:<call>`, `model:<call>#retry`.
 * Writes keys: none (the calling step logs the gap that `askGap` describes).
 */
import { receiptKey } from "../keys.js";
import { parseOutput, retryMessages, type Task, type TaskOutput } from "../prompts.js";
import type { ChatMessage, ChatResponse } from "../types.js";
import type { Gap, Run } from "./run.js";

/** Output-token cap of every model response (ARCHITECTURE.md, "The portable engine"). */
export const MAX_OUTPUT_TOKENS = 4_096;

type Why = "budget" | "malformed" | "failed";
export type Asked<T extends Task> =
  | { ok: true; value: TaskOutput<T> }
  | { ok: false; why: Why; detail: string };

export async function ask<T extends Task>(
  run: Run,
  task: T,
  key: string,
  messages: ChatMessage[],
): Promise<Asked<T>> {
  const { ops, options } = run;
  const call = (msgs: ChatMessage[]) => (signal: AbortSignal) =>
    options.chat.complete({
      model: options.chatModel,
      messages: msgs,
      maxTokens: MAX_OUTPUT_TOKENS,
      signal,
    });
  if (ops.remaining("model") < 1) return { ok: false, why: "budget", detail: "no model calls left" };
  const first = await ops.run<ChatResponse>("model", receiptKey.model(key), call(messages));
  if (!first.ok) return { ok: false, why: "failed", detail: first.error.message };
  const parsed = parseOutput(task, first.value.content);
  if (parsed.ok) return parsed;
  const problem =
    first.value.finishReason === "length"
      ? `${parsed.problem}; the reply hit the ${MAX_OUTPUT_TOKENS}-token cap`
      : parsed.problem;
  if (ops.remaining("model") < 1)
    return { ok: false, why: "malformed", detail: `${problem} (no model call left to retry)` };
  const second = await ops.run<ChatResponse>(
    "model",
    receiptKey.modelRetry(key),
    call(retryMessages(messages, first.value.content, problem)),
  );
  if (!second.ok) return { ok: false, why: "failed", detail: second.error.message };
  const reparsed = parseOutput(task, second.value.content);
  return reparsed.ok
    ? reparsed
    : { ok: false, why: "malformed", detail: `${reparsed.problem} (after one retry)` };
}

/** `text` as a sentence: an error message often ends its own (Sonde's say what to do). */
const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

/** The gap of a model call that gave nothing usable. */
export function askGap(run: Run, what: string, why: Why, detail: string): Gap {
  return {
    kind: why === "budget" ? "budget-exhausted" : why === "malformed" ? "malformed-output" : "interrupted",
    detail:
      why === "budget"
        ? `The ${what} was skipped: the model-call budget (${run.budget.modelCalls}) is spent.`
        : why === "malformed"
          ? `The model's ${what} could not be used: ${sentence(detail)}`
          : `The ${what} call failed: ${sentence(detail)}`,
  };
}
