/**
 * Every model, search and fetch call of the loop goes through `Operations.run`: it
 * charges the shared budget, reuses the receipt of a call already made (so a re-run
 * after a restart makes no repeated call), refuses new calls past the deadline, and
 * writes the receipt of a new call before its result is used. An intent is written before
 * each call is sent: a call cut off by a crash is found as an intent without an outcome,
 * and is not sent again (it may have been billed) unless the attach authorizes it.
 */
import {
  AuthenticationError,
  InsufficientCreditError,
  InvalidRequestError,
  JobNotFoundError,
  SondeError,
} from "../../src/errors.js";
import { MALFORMED_CHAT_RESPONSE, storeError } from "./errors.js";
import type { ChatResponse, Receipt } from "./types.js";

export type OperationKind = Receipt["kind"];

export interface Budget {
  modelCalls: number;
  searches: number;
  fetches: number;
  parallelism: number;
  deadlineMs: number;
}

/**
 * Budgets of a portable job when the request sets none (ARCHITECTURE.md, "The portable engine"). Shared by every
 * branch of the job; requests may raise them to at most 30 model calls, 20 searches,
 * 40 fetches, parallelism 4 and a 900 s deadline (counted from slot admission).
 */
export const defaultBudget: Budget = {
  modelCalls: 8,
  searches: 6,
  fetches: 12,
  parallelism: 2,
  deadlineMs: 180_000,
};

const budgetField = { model: "modelCalls", search: "searches", fetch: "fetches" } as const;

/** Thrown when a new call would start (or was running) past the job's deadline. */
export class DeadlineReached extends Error {
  constructor() {
    super("the job's deadline passed");
  }
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: { code: string; message: string } };

export interface OperationsOptions {
  budget: Budget;
  receipts: Map<string, Receipt>;
  save(receipt: Receipt): Promise<void>;
  clock: () => Date;
  deadlineAt: number;
  /** Aborted to pause or cancel the job: in-flight calls stop and leave no receipt. */
  signal: AbortSignal;
  /** Aborted when the deadline passes. */
  deadline: AbortSignal;
  /** Throws (the cancel reason) when a cancellation was stored since the job started. */
  checkCancelled?: () => Promise<void>;
  /** Send again the calls that were in flight when a previous runner stopped. @defaultValue false */
  repeatInterrupted?: boolean;
}

/** The error code of a call that was in flight when its runner stopped. */
export const INTERRUPTED_CODE = "interrupted_may_be_billed";

function interruptedOutcome(intent: Receipt, at: string): Receipt {
  return {
    key: intent.key,
    kind: intent.kind,
    status: "error",
    error: {
      code: INTERRUPTED_CODE,
      message: `the ${intent.kind} call was in flight when the process running the job stopped (${intent.at}); it may have been billed, so it was not sent again (attach with repeatInterruptedCalls: true to send it again)`,
    },
    at,
  };
}

/**
 * Errors that no amount of research can route around: a wrong key, no credit, a chat
 * endpoint or model that does not exist. They fail the job (it stays attachable, so
 * fixing the configuration and attaching continues it) instead of becoming a gap.
 */
function isFatal(kind: OperationKind, error: unknown): boolean {
  if (AuthenticationError.isInstance(error) || InsufficientCreditError.isInstance(error)) return true;
  if (kind !== "model") return false;
  return (
    JobNotFoundError.isInstance(error) ||
    (InvalidRequestError.isInstance(error) && error.providerCode === MALFORMED_CHAT_RESPONSE)
  );
}

function describe(error: unknown): { code: string; message: string } {
  if (SondeError.isInstance(error)) return { code: error.code, message: error.message };
  if (error instanceof Error) return { code: error.name || "error", message: error.message };
  return { code: "error", message: String(error) };
}

export class Operations {
  readonly used = { model: 0, search: 0, fetch: 0 };
  readonly tokens = { input: 0, output: 0, reasoning: 0, costUSD: 0, costKnown: true };
  readonly #options: OperationsOptions;

  constructor(options: OperationsOptions) {
    this.#options = options;
  }

  get budget(): Budget {
    return this.#options.budget;
  }

  remaining(kind: OperationKind): number {
    return Math.max(0, this.#options.budget[budgetField[kind]] - this.used[kind]);
  }

  /** Cumulative usage counts, as the `usage` wire event carries them. */
  usage() {
    return {
      inputTokens: this.tokens.input,
      outputTokens: this.tokens.output,
      reasoningTokens: this.tokens.reasoning,
      searches: this.used.search,
      fetches: this.used.fetch,
      modelCalls: this.used.model,
      ...(this.used.model > 0 && this.tokens.costKnown && { providerCostUSD: this.tokens.costUSD }),
    };
  }

  /**
   * Runs (or replays) one call. The caller checks `remaining(kind)` first; a call over
   * budget is a programming error. Throws the signal's reason on pause/cancel,
   * `DeadlineReached` past the deadline, and fatal errors; any other failure is a receipt.
   */
  async run<T>(
    kind: OperationKind,
    key: string,
    call: (signal: AbortSignal) => Promise<T>,
  ): Promise<Outcome<T>> {
    if (this.remaining(kind) < 1) throw new Error(`portable: ${kind} budget overrun at ${key}`);
    const found = this.#options.receipts.get(key);
    // An intent without an outcome is a call cut off by a crash: it may have been billed.
    const interrupted = found?.status === "intent" ? found : undefined;
    const stored = (interrupted && this.#options.repeatInterrupted) || found?.repeat ? undefined : found;
    const { signal, deadline, clock, deadlineAt } = this.#options;
    if (!stored) {
      if (signal.aborted) throw signal.reason;
      if (deadline.aborted || clock().getTime() >= deadlineAt) throw new DeadlineReached();
    }
    // Counted whether made now, replayed or interrupted, so a re-run takes the same budget
    // decisions. Reserved before any await, so that parallel branches never overdraw it.
    this.used[kind]++;
    if (interrupted && stored) {
      const outcome = interruptedOutcome(interrupted, clock().toISOString());
      await this.#save(outcome);
      return this.#replayInterrupted(outcome);
    }
    if (stored?.error?.code === INTERRUPTED_CODE) return this.#replayInterrupted(stored);
    if (stored) return this.#account(stored) as Outcome<T>;
    try {
      // Another process may have stored a cancellation: honour it before spending.
      await this.#options.checkCancelled?.();
    } catch (error) {
      this.used[kind]--;
      throw error;
    }
    await this.#save({ key, kind, status: "intent", at: clock().toISOString() }).catch((error: unknown) => {
      this.used[kind]--;
      throw error;
    });
    let receipt: Receipt;
    try {
      const value = await call(AbortSignal.any([signal, deadline]));
      receipt = { key, kind, status: "ok", result: value, at: clock().toISOString() };
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (deadline.aborted) throw new DeadlineReached();
      if (isFatal(kind, error)) {
        // A definitive refusal (bad key, no credit) was not billed: a re-run may send it again.
        await this.#save({
          key,
          kind,
          status: "error",
          error: describe(error),
          at: clock().toISOString(),
          repeat: true,
        });
        throw error;
      }
      receipt = { key, kind, status: "error", error: describe(error), at: clock().toISOString() };
    }
    // Durable before use: a restart from here replays this outcome instead of calling again.
    await this.#save(receipt);
    return this.#account(receipt) as Outcome<T>;
  }

  /** Past the deadline, a cut-off call ends the research like any call the deadline stops. */
  #replayInterrupted<T>(receipt: Receipt): Outcome<T> {
    const outcome = this.#account(receipt) as Outcome<T>;
    const { deadline, clock, deadlineAt } = this.#options;
    if (deadline.aborted || clock().getTime() >= deadlineAt) throw new DeadlineReached();
    return outcome;
  }

  async #save(receipt: Receipt): Promise<void> {
    try {
      await this.#options.save(receipt);
    } catch (error) {
      throw storeError(error);
    }
    this.#options.receipts.set(receipt.key, receipt);
  }

  #account(receipt: Receipt): Outcome<unknown> {
    if (receipt.kind === "model" && receipt.status === "ok") {
      const response = receipt.result as ChatResponse;
      this.tokens.input += response.inputTokens ?? 0;
      this.tokens.output += response.outputTokens ?? 0;
      this.tokens.reasoning += response.reasoningTokens ?? 0;
      if (typeof response.costUSD === "number") this.tokens.costUSD += response.costUSD;
      else this.tokens.costKnown = false;
    } else if (receipt.kind === "model") {
      this.tokens.costKnown = false;
    }
    return receipt.status === "ok"
      ? { ok: true, value: receipt.result }
      : { ok: false, error: receipt.error ?? { code: "error", message: "failed" } };
  }
}

/** Runs `fn` over `items` with at most `parallelism` in flight; results in item order. */
export async function pool<T, R>(
  items: readonly T[],
  parallelism: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, parallelism), items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}
