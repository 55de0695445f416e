/**
 * Perplexity's HTTP client (base URL, bearer auth); its readings of error bodies are
 * errors.ts, loaded with the first failure.
 */
import type { SondeError } from "../../src/errors.js";
import type { ProviderContext } from "../../src/provider.js";
import { createHttpClient, type HttpClient } from "../../src/transport/http.js";

export const defaultBaseURL = "https://api.perplexity.ai";

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
    classify: async (failure) => (await import("./errors.js")).classify(failure),
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
