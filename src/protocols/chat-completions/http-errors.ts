/**
 * A failed Chat Completions HTTP response, before a stream starts or as a 200 JSON body where
 * a stream was expected, read into Sonde's errors (loaded with the first failure).
 */
import { InvalidRequestError, ProviderUnavailableError, type SondeError } from "../../errors.js";
import type { ProviderName } from "../../events.js";
import { errorFromFailure } from "../../transport/error-body.js";
import { UNCOMPILED } from "../../transport/fast-json.js";
import type { HttpFailure } from "../../transport/http.js";
import { ErrorBody } from "./errors.js";

/** How one provider words its errors. */
export interface ChatErrorDialect {
  provider: ProviderName;
  /** What to do about a 404 (the model is not served), appended to the message. */
  notServed: string;
}

/** Statuses the status-code mapping already words well (key, credit, timeout, rate limit). */
const byStatus = new Set([401, 402, 403, 408, 429]);

/** A code the user can switch on: the provider's string code, never a bare status number. */
function wordCode(code: unknown): string | undefined {
  return typeof code === "string" && !/^\d+$/.test(code) ? code : undefined;
}

/**
 * The readings of a failed HTTP response that the body adds to its status; the rest is the
 * status-code mapping (`errorFromFailure`). The provider's own code (`error_type`, an
 * availability code) becomes the error's `providerCode`.
 */
export function classifyChatFailure(failure: HttpFailure, dialect: ChatErrorDialect): SondeError {
  const parsed = ErrorBody.safeParse(failure.body, UNCOMPILED);
  const body = parsed.success ? parsed.data : {};
  const metadata = body.error?.metadata;
  const errorType = metadata?.error_type ?? undefined;
  const availability = body.availability ?? body.error?.availability ?? undefined;
  const common = { provider: dialect.provider, status: failure.status, requestId: failure.requestId };
  const message = `${dialect.provider} ${failure.status}: ${failure.message}`;
  if (failure.status === 403 && (metadata?.reasons || metadata?.flagged_input || errorType === "moderation"))
    return new InvalidRequestError(`${message}. The input was flagged by moderation; rephrase the query.`, {
      ...common,
      providerCode: "moderation",
    });
  if (failure.status === 404)
    return new InvalidRequestError(`${message}. ${dialect.notServed}`, {
      ...common,
      providerCode: availability?.code ?? "model_not_found",
    });
  if (failure.status >= 500 && availability?.retryable === false)
    return new ProviderUnavailableError(
      `${message} (${availability.code ?? "unavailable"}; not retryable).`,
      { ...common, providerCode: availability.code ?? wordCode(failure.code), retryable: false },
    );
  if (failure.status >= 400 && failure.status < 500 && !byStatus.has(failure.status))
    return new InvalidRequestError(message, { ...common, providerCode: errorType ?? wordCode(failure.code) });
  // The numeric `code` repeats the status; `error_type` is the provider's own name for the failure.
  return errorFromFailure({ ...failure, code: errorType ?? wordCode(failure.code) });
}

/**
 * A 200 JSON body where a stream was expected (`{error: {code, message}}`, code = the
 * real status; 502 when it names none): no run was started.
 */
export function failureOfBody(provider: ProviderName, response: Response, body: unknown): HttpFailure {
  const error = ErrorBody.safeParse(body, UNCOMPILED).data?.error;
  const code = error?.code;
  return {
    provider,
    status: typeof code === "number" ? code : 502,
    body,
    headers: response.headers,
    requestId: response.headers.get("x-generation-id") ?? undefined,
    retryAfterMs: undefined,
    message: error?.message ?? "the response was not an event stream",
    code: code === undefined || code === null ? undefined : String(code),
  };
}
