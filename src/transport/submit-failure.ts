/**
 * What a failed job submission means (see `submitOnce` in http.ts, which loads this with the
 * first failure): rethrown as is when a status line proves no job was made, else the typed
 * error that says whether the job may exist.
 */
import {
  IndeterminateSubmissionError,
  InvalidRequestError,
  JobNotFoundError,
  SondeError,
} from "../errors.js";
import type { ProviderName } from "../events.js";
import { noSuchJob } from "./error-body.js";
import { toTransportError } from "./http.js";
import { connectionFailure } from "./network.js";

/** Statuses a gateway sends when it lost the engine mid-request: the job may exist behind them. */
const gatewayFailures = new Set([502, 504, 524]);

/** The error a failed submission is thrown as. */
export function submitFailure(error: unknown, provider: ProviderName, signal: AbortSignal): unknown {
  if (
    SondeError.isInstance(error) &&
    !IndeterminateSubmissionError.isInstance(error) &&
    error.status !== undefined &&
    gatewayFailures.has(error.status)
  ) {
    // A gateway lost or timed out on the engine behind it: the status line is the gateway's,
    // and the engine may have accepted (and be billing) the job.
    return new IndeterminateSubmissionError(
      `${provider}: the job submission got a gateway error (${error.status}). It may or may not have ` +
        "started and billed; Sonde did not resend it. Check the provider's dashboard before submitting again.",
      {
        provider,
        status: error.status,
        ...(error.requestId !== undefined && { requestId: error.requestId }),
        cause: error,
      },
    );
  }
  if (JobNotFoundError.isInstance(error))
    // No job was named yet: the path (base URL), the model or a previous job is what was not found.
    return new InvalidRequestError(
      `${error.message.replace(` ${noSuchJob(provider)}`, "")} No job was created: check the ${provider} baseURL (path included), the model and any previousJobId.`,
      { provider, status: 404, requestId: error.requestId, providerCode: error.providerCode, cause: error },
    );
  if (SondeError.isInstance(error)) return error;
  if (signal.aborted) return toTransportError(error, provider, signal);
  // Refused, unresolved or failed TLS: nothing was sent, so the job's retry policy may resend it.
  const neverSent = connectionFailure(error, provider);
  if (neverSent) return neverSent;
  const detail = error instanceof Error ? error.message : String(error);
  return new IndeterminateSubmissionError(
    `${provider}: the job submission got no answer (${detail}). It may or may not have started and billed; ` +
      "Sonde did not resend it. Check the provider's dashboard before submitting again.",
    { provider, cause: error },
  );
}
