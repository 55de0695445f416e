/**
 * Perplexity's HTTP client (base URL, bearer auth) and its readings of error bodies
 * (providers/perplexity/WIRE.md §8): `{"error":{"message","type","code"}}` with an integer
 * `code`, so the `type` is the code worth keeping; the retired Sonar API's 403.
 */
import { InvalidRequestError, type SondeError } from "../../src/errors.js";
import { WireErrorBody } from "../../src/protocols/responses/wire.js";
import type { ProviderContext } from "../../src/provider.js";
import {
  createHttpClient,
  errorFromFailure,
  type HttpClient,
  type HttpFailure,
} from "../../src/transport/http.js";
import { sonarRetired } from "./request.js";

export const defaultBaseURL = "https://api.perplexity.ai";

function errorType(body: unknown): string | undefined {
  const parsed = WireErrorBody.safeParse(body);
  return (parsed.success && parsed.data.error?.type) || undefined;
}

export function classify(failure: HttpFailure): SondeError | undefined {
  const type = errorType(failure.body);
  const common = { provider: "perplexity" as const, status: failure.status, requestId: failure.requestId };
  // Sonar paths since the sunset: a retirement, not a bad key (providers/perplexity/WIRE.md §1, P6).
  if (failure.status === 403 && type === "chat_completions_not_available") return sonarRetired();
  if (failure.status === 400 || failure.status === 413 || failure.status === 422 || failure.status === 424)
    return new InvalidRequestError(`perplexity ${failure.status}: ${failure.message}`, {
      ...common,
      providerCode: type ?? failure.code,
    });
  // The integer `code` repeats the status: the `type` is Perplexity's name for the failure.
  return errorFromFailure({ ...failure, code: type ?? failure.code });
}

export function perplexityHttp(context: ProviderContext): HttpClient {
  return createHttpClient({
    provider: "perplexity",
    baseURL: context.settings.baseURL ?? defaultBaseURL,
    headers: { Authorization: `Bearer ${context.settings.apiKey ?? ""}` },
    fetch: context.fetch,
    clock: context.clock,
    // Every answer starts at once (a background submit returns in well under a second, WIRE.md §5):
    // headers that take longer than the idle limit mean a dead request.
    timeoutMs: context.idleTimeoutMs,
    classify,
  });
}

/**
 * A resume after the reconnect window answers 400 (WIRE.md §11); the run itself is fine and can
 * be polled. Only the resume GET asks this, so any 400 there means "poll instead".
 */
export function isStreamRefused(error: unknown): boolean {
  return (error as { status?: unknown } | null)?.status === 400;
}

/** WIRE.md §9: a 5xx on the create may come after the run was stored; there is no key to reconcile it. */
export function isIndeterminateCreateFailure(error: SondeError): boolean {
  return error.status !== undefined && error.status >= 500;
}
