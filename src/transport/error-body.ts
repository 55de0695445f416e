/**
 * A failed response, read and typed: its body, its request id and `Retry-After`, and the
 * status-code mapping onto Sonde's errors. Loaded on the first failure (see http.ts), so
 * none of it is built or bundled up front on the way to a successful request.
 */
import { z } from "zod";
import {
  AuthenticationError,
  InsufficientCreditError,
  InvalidRequestError,
  JobNotFoundError,
  ProviderUnavailableError,
  RateLimitError,
  type SondeError,
} from "../errors.js";
import type { ProviderName } from "../events.js";
import { UNCOMPILED } from "./fast-json.js";
import type { HttpFailure } from "./http.js";
import { parseRetryAfter } from "./retry.js";

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

export function describe(body: unknown): { message: string | undefined; code: string | undefined } {
  if (typeof body === "string") return { message: body.slice(0, 500) || undefined, code: undefined };
  const parsed = ErrorEnvelope.safeParse(body, UNCOMPILED);
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
        const known = ValidationIssue.safeParse(issue, UNCOMPILED);
        return known.success ? `${known.data.loc?.join(".") ?? ""}: ${known.data.msg ?? ""}` : String(issue);
      })
      .join("; ");
  }
  const rawCode = inner.code ?? inner.type ?? inner.status ?? record.code;
  return { message, code: rawCode === undefined || rawCode === null ? undefined : String(rawCode) };
}

/** An error body as text, parsed when it says it is JSON (`*\/json`, `*+json`); undefined when empty or unreadable. */
export async function errorBody(response: Response, read: () => Promise<string>): Promise<unknown> {
  let text: string;
  try {
    text = await read();
  } catch {
    return undefined;
  }
  if (!text) return undefined;
  const type = (response.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (!/\/(?:.*[.+-])?json$/.test(type)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const requestIdHeaders = ["x-request-id", "request-id", "x-goog-request-id", "x-generation-id", "cf-ray"];

/** What a 404 on a job means (submit-failure.ts takes it off again: a submission names no job). */
export const noSuchJob = (provider: ProviderName) =>
  `${provider} has no such job (expired, deleted, or another account's).`;

/** Maps a failed response onto the typed error hierarchy (status first, provider hints second). */
export function errorFromFailure(failure: HttpFailure): SondeError {
  const { provider, status, requestId, retryAfterMs } = failure;
  const common = { provider, status, requestId, providerCode: failure.code };
  const message = `${provider} ${status}: ${failure.message}`;
  // The provider's own sentence, then what to do (one full stop between them, not two).
  const then = (hint: string) => `${message}${/[.!?]$/.test(message) ? "" : "."} ${hint}`;
  if (status === 401 || status === 403)
    return new AuthenticationError(then(`Check the ${provider} API key.`), common);
  if (status === 402)
    return new InsufficientCreditError(then(`Add credit to the ${provider} account.`), common);
  if (status === 404) return new JobNotFoundError(then(noSuchJob(provider)), common);
  if (status === 429)
    return new RateLimitError(message, { ...common, ...(retryAfterMs !== undefined && { retryAfterMs }) });
  if (status === 408 || status >= 500)
    return new ProviderUnavailableError(
      then(`A failure on ${provider}'s side, usually brief: try again later.`),
      {
        ...common,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      },
    );
  return new InvalidRequestError(message, common);
}

/** What a failed response says: its status, body, request id, `Retry-After`, message and code. */
export function failureFromResponse(
  provider: ProviderName,
  response: Response,
  body: unknown,
  clock: () => Date = () => new Date(),
): HttpFailure {
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
