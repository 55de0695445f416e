/**
 * What a 429 means before any job id exists. The job-creating request was refused,
 * so resending it cannot double-bill, but waiting silently can hang a caller for
 * minutes and resending in a loop only hammers the limit. So: a wait longer than
 * `retry.maxDelayMs` is handed to the caller at once, a shorter one is waited out
 * (logged at `info`) and the request resent once; a second 429 is surfaced too.
 */
import { RateLimitError, SondeError } from "../errors.js";
import type { Logger, RetryPolicy } from "../provider.js";

/** How many times a rate-limited job-creating request is resent. */
export const SUBMIT_RATE_LIMIT_RESENDS = 1;

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.ceil(ms / 1000)} s`;
}

/**
 * Applies the pre-job 429 rules to one failed submission. Tracks its own resend count,
 * so one instance serves one job's submission.
 */
export class SubmitRateLimit {
  readonly #policy: RetryPolicy;
  readonly #logger: Logger;
  readonly #resendable = new WeakSet<object>();
  #resent = 0;

  constructor(policy: RetryPolicy, logger: Logger) {
    this.#policy = policy;
    this.#logger = logger;
  }

  /**
   * The error to throw for a failed submission. A 429 that may be resent is passed on
   * as is (and remembered, see `mayResend`); one that may not comes back as a
   * `RateLimitError` that says why Sonde did not wait. Other errors pass through.
   */
  review(error: unknown): unknown {
    if (!RateLimitError.isInstance(error)) return error;
    // A provider's own non-retryable 429 (e.g. the hosted one-job-in-flight rule) explains itself.
    if (!error.retryable) return error;
    const wait = error.retryAfterMs;
    const options = {
      ...(error.provider !== undefined && { provider: error.provider }),
      ...(error.status !== undefined && { status: error.status }),
      ...(error.requestId !== undefined && { requestId: error.requestId }),
      ...(error.providerCode !== undefined && { providerCode: error.providerCode }),
      ...(wait !== undefined && { retryAfterMs: wait }),
      cause: error,
    };
    if (wait !== undefined && wait > this.#policy.maxDelayMs)
      return new RateLimitError(
        `${error.message} The server asks to wait ${seconds(wait)}, longer than retry.maxDelayMs ` +
          `(${seconds(this.#policy.maxDelayMs)}), so Sonde did not wait or resend: no job was created. ` +
          "Start it again after retryAfterMs, or raise retry.maxDelayMs to let Sonde wait.",
        options,
      );
    if (this.#resent >= SUBMIT_RATE_LIMIT_RESENDS || this.#policy.attempts < 1)
      return new RateLimitError(
        `${error.message} ${this.#resent ? "Sonde waited and resent once; it was rate limited again" : "Retries are off (retry.attempts is 0)"}, so no job was created. Start it again later${wait !== undefined ? ` (after ${seconds(wait)})` : ""}.`,
        options,
      );
    this.#resendable.add(error);
    return error;
  }

  /** Whether `error` is a 429 that `review` cleared for its one resend. */
  mayResend(error: unknown): boolean {
    return SondeError.isInstance(error) && this.#resendable.has(error);
  }

  /** Called when the resend is scheduled: counts it and says, at `info`, how long Sonde waits. */
  resending(error: RateLimitError, delayMs: number): void {
    this.#resent++;
    this.#logger.info("rate limited before the job was created; waiting, then resending once", {
      provider: error.provider,
      waitMs: Math.round(delayMs),
      retryAfterMs: error.retryAfterMs,
    });
  }
}
