import { JobAbortedError, SondeError, StreamInterruptedError } from "../errors.js";
import type { ProviderName } from "../events.js";

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
  /**
   * Provider-specific mapping; return undefined to fall back to the status-code mapping. A
   * failure is a cold path: a provider loads its mapping with the first one (`async`).
   */
  classify?: (failure: HttpFailure) => SondeError | undefined | Promise<SondeError | undefined>;
}

/** Per-call options of an {@link HttpClient} request. */
export interface HttpRequestOptions {
  /** Sent as the JSON body, with `content-type: application/json`. */
  json?: unknown;
  /** Appended to the URL's query; `undefined` values are left out. */
  searchParams?: Record<string, string | number | boolean | undefined>;
  /** Merged over the client's headers; `undefined` removes one. */
  headers?: Record<string, string | undefined>;
  signal?: AbortSignal | undefined;
  /** `false`: a non-2xx response is returned instead of thrown. @defaultValue true */
  throwHttpErrors?: boolean;
}

/** A response promise whose `.json()` asks for JSON and reads the body within the timeout. */
export interface ResponsePromise extends Promise<Response> {
  json<T = unknown>(): Promise<T>;
}

/** One provider's HTTP client: base URL, auth headers and typed errors over `fetch`. */
export interface HttpClient {
  get(input: string | URL, options?: HttpRequestOptions): ResponsePromise;
  post(input: string | URL, options?: HttpRequestOptions): ResponsePromise;
  delete(input: string | URL, options?: HttpRequestOptions): ResponsePromise;
}

/** What a request that got no response headers in time rejects with. */
function timeoutError(request: Request, ms: number): Error {
  return Object.assign(new Error(`Request timed out after ${ms} ms: ${request.method} ${request.url}`), {
    name: "TimeoutError",
  });
}

/** Rejects with a timeout error (and aborts the request) unless `work` settles within `ms`. */
function within<T>(work: Promise<T>, ms: number, request: Request, abort: AbortController): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      abort.abort();
      reject(timeoutError(request, ms));
    }, ms);
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

function requestFor(
  options: HttpClientOptions,
  method: string,
  input: string | URL,
  init: HttpRequestOptions,
  signal: AbortSignal,
) {
  const url =
    typeof input === "string"
      ? new URL(`${options.baseURL.replace(/\/+$/, "")}/${input.replace(/^\/+/, "")}`)
      : new URL(input);
  for (const [key, value] of Object.entries(init.searchParams ?? {}))
    if (value !== undefined) url.searchParams.append(key, String(value));
  const headers = new Headers();
  for (const [key, value] of Object.entries({ ...options.headers, ...init.headers }))
    if (value !== undefined) headers.set(key, value);
  if (init.json !== undefined && !headers.has("content-type"))
    headers.set("content-type", "application/json");
  return new Request(url, {
    method,
    headers,
    signal,
    ...(init.json !== undefined && { body: JSON.stringify(init.json) }),
  });
}

/**
 * One client per provider over the injected `fetch`: base URL, auth headers, a timeout on
 * the response headers, typed errors from `classify` (else the status-code mapping). It
 * never retries: reconnects and polls retry under the job's own policy, and a job-creating
 * POST is never resent blindly. (Plain `fetch` rather than a wrapper library: this is all
 * Sonde asked of one, and a library's feature detection cost ~30 ms of cold import.)
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const send = (method: string, input: string | URL, init: HttpRequestOptions = {}): ResponsePromise => {
    const abort = new AbortController();
    const signal = init.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal;
    const request = requestFor(options, method, input, init, signal);
    // `.json()` may set Accept before the request leaves: send it a microtask later.
    const response = Promise.resolve().then(async () => {
      const answer = await within(options.fetch(request), timeoutMs, request, abort);
      if (answer.ok || init.throwHttpErrors === false) return answer;
      // A failed response is a cold path: reading and typing it loads with the first one.
      const failures = await import("./error-body.js");
      const body = await failures.errorBody(answer, () => within(answer.text(), timeoutMs, request, abort));
      const failure = failures.failureFromResponse(options.provider, answer, body, options.clock);
      throw (await options.classify?.(failure)) ?? failures.errorFromFailure(failure);
    });
    return Object.assign(response, {
      json: async <T>() => {
        if (!request.headers.has("accept")) request.headers.set("accept", "application/json");
        const text = await within((await response).text(), timeoutMs, request, abort);
        return JSON.parse(text) as T;
      },
    });
  };
  return {
    get: (input, init) => send("GET", input, init),
    post: (input, init) => send("POST", input, init),
    delete: (input, init) => send("DELETE", input, init),
  };
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
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new StreamInterruptedError(`${provider}: connection lost (${detail})`, { provider, cause: error });
}

/**
 * `toTransportError`, but a connection never made is a `ConnectionError` naming its code.
 * Telling it apart is a cold path: network.ts loads with the first such failure.
 */
export async function typedTransportError(
  error: unknown,
  provider: ProviderName,
  signal?: AbortSignal,
): Promise<SondeError> {
  if (SondeError.isInstance(error) || signal?.aborted) return toTransportError(error, provider, signal);
  const { connectionFailure } = await import("./network.js");
  return connectionFailure(error, provider) ?? toTransportError(error, provider);
}

/**
 * Sends a job-creating request exactly once. A typed HTTP error (a status line came
 * back, so the job was not created) is rethrown as is — 429/5xx stay retryable — except
 * a gateway's bad-gateway or timeout (502, 504, 524), which proves nothing, and a 404 (no job
 * was named yet). A failure that proves the request never left (see network.ts) is a retryable
 * `ConnectionError`. Any other failure (timeout, reset) may have created the job:
 * `IndeterminateSubmissionError`. (See submit-failure.ts, loaded with the first failure.)
 */
export async function submitOnce<T>(
  provider: ProviderName,
  signal: AbortSignal,
  send: () => Promise<T>,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw (await import("./submit-failure.js")).submitFailure(error, provider, signal);
  }
}
