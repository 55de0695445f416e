/** The hosted job API's readings of a failed response beyond its status (loaded with the first failure). */
import { InvalidRequestError, RateLimitError, type SondeError } from "../../src/errors.js";
import { errorFromFailure } from "../../src/transport/error-body.js";
import type { HttpFailure } from "../../src/transport/http.js";
import { errorBodyCode } from "./wire.js";

/**
 * The service allows one job in flight per organization and answers a second invoke with 429.
 * Its error body is not specified; these words are how such an answer names the rule.
 */
const JOB_IN_FLIGHT = /in[ -]flight|already (running|queued|in progress)|concurrent job|one job/i;

export function classify(raw: HttpFailure): SondeError {
  const failure = { ...raw, code: errorBodyCode(raw.body) ?? raw.code };
  const common = {
    provider: "hosted" as const,
    status: failure.status,
    requestId: failure.requestId,
    providerCode: failure.code,
  };
  if (failure.status === 429) {
    const retryAfter = failure.retryAfterMs !== undefined && { retryAfterMs: failure.retryAfterMs };
    // Waiting and re-posting cannot help while the other job runs: it only finishes, or is cancelled.
    if (JOB_IN_FLIGHT.test(`${failure.message} ${failure.code ?? ""}`))
      return new RateLimitError(
        `hosted 429: ${failure.message}. Only one job may be in flight per organization: poll the running job ` +
          "(research.get(ref) or research.attach(ref)) until it ends, or cancel it (research.cancel(ref)), then " +
          "start this one. Sonde did not resend the invoke.",
        { ...common, ...retryAfter, retryable: false },
      );
    const wait =
      failure.retryAfterMs !== undefined ? ` Retry after ${Math.ceil(failure.retryAfterMs / 1000)} s.` : "";
    return new RateLimitError(
      `hosted 429: ${failure.message}.${wait} If another job of this organization is still queued or running ` +
        "(one may be in flight), poll or cancel it (research.cancel(ref)) instead.",
      { ...common, ...retryAfter },
    );
  }
  if (failure.status === 422)
    return new InvalidRequestError(
      `hosted 422: ${failure.message}. The service rejected the request body.`,
      common,
    );
  return errorFromFailure(failure);
}
