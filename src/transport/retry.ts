import { JobAbortedError, SondeError } from "../errors.js";
import type { RetryPolicy } from "../provider.js";

export const defaultRetryPolicy: RetryPolicy = { attempts: 6, minDelayMs: 500, maxDelayMs: 30_000 };

/**
 * Parses `Retry-After` (delta-seconds or HTTP-date) and `retry-after-ms` into
 * milliseconds from `now`. An HTTP-date is read against the response's own `Date`
 * when it has one (both come from the server's clock, so skew and an injected test
 * clock cannot turn it into no wait or an endless one). Undefined when absent or unparseable.
 */
export function parseRetryAfter(headers: Headers, now: Date = new Date()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  const served = Date.parse(headers.get("date") ?? "");
  return Math.max(0, date - (Number.isNaN(served) ? now.getTime() : served));
}

function retryAfterOf(error: unknown): number | undefined {
  const value = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof value === "number" && value >= 0 ? value : undefined;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export interface RetryOptions {
  policy: RetryPolicy;
  signal: AbortSignal;
  /** Whether this failure may be retried; default: `SondeError.retryable`. */
  shouldRetry?: (error: unknown) => boolean;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `operation` under p-retry: jittered exponential backoff between
 * `minDelayMs` and `maxDelayMs`, at most `attempts` retries, aborted by `signal`,
 * and never sooner than the server's `Retry-After`. p-retry is loaded on the first failure
 * (most calls succeed at once), which is then handed to it as attempt 1, so the backoff,
 * callbacks and errors are p-retry's own from there on.
 */
export async function withRetry<T>(
  operation: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const { signal } = options;
  signal.throwIfAborted();
  let first: unknown;
  try {
    const result = await operation(1);
    signal.throwIfAborted();
    return result;
  } catch (error) {
    first = error;
  }
  const { default: pRetry } = await import("p-retry");
  return pRetry(
    (attempt) => (attempt === 1 ? Promise.reject(first) : operation(attempt)),
    retryOptions(options),
  );
}

function retryOptions(options: RetryOptions): import("p-retry").Options {
  const { policy, signal } = options;
  const shouldRetry = options.shouldRetry ?? ((error) => SondeError.isInstance(error) && error.retryable);
  return {
    retries: Math.max(0, policy.attempts),
    minTimeout: policy.minDelayMs,
    maxTimeout: policy.maxDelayMs,
    factor: 2,
    randomize: true,
    signal,
    shouldRetry: ({ error }) => !signal.aborted && !JobAbortedError.isInstance(error) && shouldRetry(error),
    onFailedAttempt: async ({ error, attemptNumber, retryDelay, retriesLeft }) => {
      if (retriesLeft <= 0 || signal.aborted || !shouldRetry(error)) return;
      const retryAfter = retryAfterOf(error);
      options.onRetry?.(error, attemptNumber, Math.max(retryDelay, retryAfter ?? 0));
      // p-retry waits `retryDelay` after this; make up the difference to honour Retry-After.
      if (retryAfter !== undefined && retryAfter > retryDelay) await sleep(retryAfter - retryDelay, signal);
    },
  };
}

/** Delay before poll number `attempt` (0-based): exponential with full jitter, server hint first. */
export function pollDelay(attempt: number, policy: RetryPolicy, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined)
    return Math.min(Math.max(retryAfterMs, 0), Math.max(policy.maxDelayMs, retryAfterMs));
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}
