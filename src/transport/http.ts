import ky, { HTTPError, isHTTPError, type KyInstance } from "ky";
import { z } from "zod";
import {
  AuthenticationError,
  IndeterminateSubmissionError,
  InsufficientCreditError,
  InvalidRequestError,
  JobAbortedError,
  JobNotFoundError,
  ProviderUnavailableError,
  RateLimitError,
  SondeError,
  StreamInterruptedError,
} from "../errors.js";
import type { ProviderName } from "../events.js";
import { connectionFailure } from "./network.js";
import { parseRetryAfter } from "./retry.js";

/** What a failed HTTP response looked like, for provider-specific classification. */
export interface HttpFailure {
  provider: ProviderName;
  status: number;
  /** Parsed JSON body, or text, or undefined. */
  body: unknown;
  headers: Headers;
  requestId: string | undefined;
  retryAfterMs: number | undefined;
  /** The best message found in the body. */
  message: string;
  /** The provider's own code found in the body; it becomes the error's `providerCode`, never its `code`. */
  code: string | undefined;
}

export interface HttpClientOptions {
  provider: ProviderName;
  baseURL: string;
  headers: Record<string, string | undefined>;
  fetch: typeof globalThis.fetch;
  clock?: () => Date;
  /** Per-request timeout for non-streaming calls. @defaultValue 60_000 */
  timeoutMs?: number;
  /** Provider-specific mapping; return undefined to fall back to the status-code mapping. */
  classify?: (failure: HttpFailure) => SondeError | undefined;
}

const requestIdHeaders = ["x-request-id", "request-id", "x-goog-request-id", "x-generation-id", "cf-ray"];

// Error bodies seen across providers, read leniently: a field of an unexpected type is dropped, never thrown on.
const code = z.union([z.string(), z.number()]).nullish().catch(undefined);
const text = z.string().nullish().catch(undefined);
const ErrorFields = z.looseObject({ message: text, code, type: code, status: code });
/** FastAPI-style validation errors (Perplexity 422): `{"detail": [{loc, msg, type}]}`. */
const ValidationIssue = z.looseObject({ loc: z.array(z.unknown()).nullish().catch(undefined), msg: text });
const ErrorEnvelope = z.looseObject({
  ...ErrorFields.shape,
  error: z.union([z.string(), ErrorFields]).nullish().catch(undefined),
  detail: z
    .union([z.string(), z.array(z.unknown())])
    .nullish()
    .catch(undefined),
});

function describe(body: unknown): { message: string | undefined; code: string | undefined } {
  if (typeof body === "string") return { message: body.slice(0, 500) || undefined, code: undefined };
  const parsed = ErrorEnvelope.safeParse(body);
  if (!parsed.success) return { message: undefined, code: undefined };
  const record = parsed.data;
  const inner = typeof record.error === "object" && record.error ? record.error : record;
  const { detail } = record;
  let message =
    inner.message ||
    (typeof record.error === "string" && record.error) ||
    (typeof detail === "string" && detail) ||
    undefined;
  if (!message && Array.isArray(detail)) {
    message = detail
      .map((issue) => {
        const known = ValidationIssue.safeParse(issue);
        return known.success ? `${known.data.loc?.join(".") ?? ""}: ${known.data.msg ?? ""}` : String(issue);
      })
      .join("; ");
  }
  const rawCode = inner.code ?? inner.type ?? inner.status ?? record.code;
  return { message, code: rawCode === undefined || rawCode === null ? undefined : String(rawCode) };
}

/** Maps a failed response onto the typed error hierarchy (status first, provider hints second). */
export function errorFromFailure(failure: HttpFailure): SondeError {
  const { provider, status, requestId, retryAfterMs } = failure;
  const common = { provider, status, requestId, providerCode: failure.code };
  const message = `${provider} ${status}: ${failure.message}`;
  if (status === 401 || status === 403)
    return new AuthenticationError(`${message}. Check the ${provider} API key.`, common);
  if (status === 402)
    return new InsufficientCreditError(`${message}. Add credit to the ${provider} account.`, common);
  if (status === 404) return new JobNotFoundError(message, common);
  if (status === 429)
    return new RateLimitError(message, { ...common, ...(retryAfterMs !== undefined && { retryAfterMs }) });
  if (status === 408 || status >= 500)
    return new ProviderUnavailableError(message, {
      ...common,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  return new InvalidRequestError(message, common);
}

export async function failureFromResponse(
  provider: ProviderName,
  response: Response,
  body: unknown,
  clock: () => Date = () => new Date(),
): Promise<HttpFailure> {
  const { message, code } = describe(body);
  const requestId = requestIdHeaders.map((h) => response.headers.get(h)).find((v) => v) ?? undefined;
  return {
    provider,
    status: response.status,
    body,
    headers: response.headers,
    requestId,
    retryAfterMs: parseRetryAfter(response.headers, clock()),
    message: message ?? (response.statusText || "request failed"),
    code,
  };
}

/**
 * One ky instance per provider: base URL, auth headers, typed errors from a
 * `beforeError` hook. No ky-level retries at all: reconnects and polls retry under
 * the job's own p-retry policy, and a job-creating POST is never retried blindly.
 */
export function createHttpClient(options: HttpClientOptions): KyInstance {
  const headers = Object.fromEntries(
    Object.entries(options.headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return ky.create({
    prefix: options.baseURL,
    headers,
    fetch: options.fetch,
    retry: 0,
    timeout: options.timeoutMs ?? 60_000,
    throwHttpErrors: true,
    hooks: {
      beforeError: [
        async ({ error }) => {
          if (!isHTTPError(error)) return error;
          const failure = await failureFromResponse(
            options.provider,
            error.response,
            error.data,
            options.clock,
          );
          const mapped = options.classify?.(failure) ?? errorFromFailure(failure);
          return mapped;
        },
      ],
    },
  });
}

/**
 * Maps whatever a transport call threw onto Sonde's errors. Our own errors pass
 * through; the caller's abort becomes `JobAbortedError`; anything else (reset,
 * DNS, TLS, timeout) is a retryable `StreamInterruptedError`.
 */
export function toTransportError(error: unknown, provider: ProviderName, signal?: AbortSignal): SondeError {
  if (SondeError.isInstance(error)) return error;
  if (signal?.aborted)
    return signal.reason instanceof SondeError
      ? signal.reason
      : new JobAbortedError("aborted", signal.reason);
  if (error instanceof HTTPError)
    return new ProviderUnavailableError(`${provider}: ${error.message}`, { provider });
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new StreamInterruptedError(`${provider}: connection lost (${detail})`, { provider, cause: error });
}

/** Statuses a gateway sends when it lost the engine mid-request: the job may exist behind them. */
const gatewayFailures = new Set([502, 504, 524]);

/**
 * Sends a job-creating request exactly once. A typed HTTP error (a status line came
 * back, so the job was not created) is rethrown as is — 429/5xx stay retryable — except
 * a gateway's bad-gateway or timeout (502, 504, 524), which proves nothing. A failure that
 * proves the request never left (see network.ts) is a retryable `ConnectionError`. Any
 * other failure (timeout, reset) may have created the job: `IndeterminateSubmissionError`.
 */
export async function submitOnce<T>(
  provider: ProviderName,
  signal: AbortSignal,
  send: () => Promise<T>,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (
      SondeError.isInstance(error) &&
      !IndeterminateSubmissionError.isInstance(error) &&
      error.status !== undefined &&
      gatewayFailures.has(error.status)
    ) {
      // A gateway lost or timed out on the engine behind it: the status line is the gateway's,
      // and the engine may have accepted (and be billing) the job.
      throw new IndeterminateSubmissionError(
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
    if (SondeError.isInstance(error)) throw error;
    if (signal.aborted) throw toTransportError(error, provider, signal);
    // Refused, unresolved or failed TLS: nothing was sent, so the job's retry policy may resend it.
    const neverSent = connectionFailure(error, provider);
    if (neverSent) throw neverSent;
    const detail = error instanceof Error ? error.message : String(error);
    throw new IndeterminateSubmissionError(
      `${provider}: the job submission got no answer (${detail}). It may or may not have started and billed; ` +
        "Sonde did not resend it. Check the provider's dashboard before submitting again.",
      { provider, cause: error },
    );
  }
}
