import type { ProviderName } from "../events.js";
import type { Logger, RetryPolicy, WireEvent } from "../provider.js";
import { FINAL_CURSOR } from "./final-cursor.js";
import { type HttpClient, typedTransportError } from "./http.js";
import { parseRetryAfter, pollDelay, sleep, withRetry } from "./retry.js";

export interface Polled<T> {
  value: T;
  /** The server's `Retry-After`, which sets the wait before the next poll. */
  retryAfterMs?: number | undefined;
}

export interface PollOptions<T> {
  provider: ProviderName;
  /** One GET. Failures are mapped to typed errors; retryable ones are retried under `policy`. */
  fetch: (signal: AbortSignal) => Promise<Polled<T>>;
  isTerminal: (value: T) => boolean;
  policy: RetryPolicy;
  signal: AbortSignal;
  /** Skip the wait before the first poll (attach, or a poll fallback after a drop). */
  immediate?: boolean;
  /** Hears a wait the server asks for that is longer than `policy.maxDelayMs` (never a silent wait). */
  logger?: Logger;
}

/** One GET of a JSON resource, with the server's `Retry-After` read off the response. */
export async function getJson(
  http: HttpClient,
  target: string | URL,
  options: { provider: ProviderName; clock: () => Date; signal?: AbortSignal | undefined },
): Promise<Polled<unknown>> {
  try {
    const response = await http.get(target, { signal: options.signal });
    return { value: await response.json(), retryAfterMs: parseRetryAfter(response.headers, options.clock()) };
  } catch (error) {
    throw await typedTransportError(error, options.provider, options.signal);
  }
}

/**
 * Polls until a terminal snapshot, yielding every snapshot (the caller turns them
 * into `status` heartbeats). Waits grow exponentially with jitter between
 * `minDelayMs` and `maxDelayMs`; a server's `Retry-After` takes precedence.
 * A failed GET (reset, 5xx, 429) is retried under the same policy: polling is safe.
 */
export async function* pollUntilTerminal<T>(options: PollOptions<T>): AsyncGenerator<T> {
  const { provider, signal, policy } = options;
  // The job exists and polling sends nothing billable, so a long Retry-After is honoured, but said.
  const waiting = (waitMs: number) => {
    if (waitMs > policy.maxDelayMs)
      options.logger?.warn(
        "the server asks to wait longer than retry.maxDelayMs before the next poll; waiting",
        {
          provider,
          waitMs,
        },
      );
  };
  let retryAfterMs: number | undefined;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0 || !options.immediate) {
      const delay = pollDelay(attempt, policy, retryAfterMs);
      waiting(delay);
      await sleep(delay, signal);
    }
    const snapshot = await withRetry(
      async () => {
        try {
          return await options.fetch(signal);
        } catch (error) {
          throw await typedTransportError(error, provider, signal);
        }
      },
      {
        policy,
        signal,
        onRetry: (_error, _attempt, delayMs) => waiting(delayMs),
      },
    );
    retryAfterMs = snapshot.retryAfterMs;
    yield snapshot.value;
    if (options.isTerminal(snapshot.value)) return;
  }
}

/** `pollUntilTerminal` as wire events: heartbeats without a cursor, the terminal snapshot under `FINAL_CURSOR`. */
export async function* pollWire<T>(options: PollOptions<T>): AsyncGenerator<WireEvent> {
  for await (const snapshot of pollUntilTerminal(options)) {
    yield options.isTerminal(snapshot) ? { cursor: FINAL_CURSOR, data: snapshot } : { data: snapshot };
  }
}
