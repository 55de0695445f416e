import type { RetryPolicy } from "../provider.js";
import { pollDelay, sleep, withRetry } from "./retry.js";

export interface PollOptions<T> {
  /** One GET. Transient failures (retryable errors) are retried under `policy`. */
  fetch: (signal: AbortSignal) => Promise<{ value: T; retryAfterMs?: number | undefined }>;
  isTerminal: (value: T) => boolean;
  policy: RetryPolicy;
  signal: AbortSignal;
  /** Skip the wait before the first poll (attach, or a poll fallback after a drop). */
  immediate?: boolean;
}

/**
 * Polls until a terminal snapshot, yielding every snapshot (the caller turns them
 * into `status` heartbeats). Waits grow exponentially with jitter between
 * `minDelayMs` and `maxDelayMs`; a server's `Retry-After` takes precedence.
 */
export async function* pollUntilTerminal<T>(options: PollOptions<T>): AsyncGenerator<T> {
  let retryAfterMs: number | undefined;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0 || !options.immediate)
      await sleep(pollDelay(attempt, options.policy, retryAfterMs), options.signal);
    const snapshot = await withRetry(() => options.fetch(options.signal), {
      policy: options.policy,
      signal: options.signal,
    });
    retryAfterMs = snapshot.retryAfterMs;
    yield snapshot.value;
    if (options.isTerminal(snapshot.value)) return;
  }
}
