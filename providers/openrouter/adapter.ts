/**
 * OpenRouter Chat Completions (WIRE.md): one long streamed
 * request with no job id, no resume and no server-side cancel. The generation id of
 * the first chunk stands in for a job id. A drop ends the job: Sonde never resends a
 * request that may already be running and billing upstream.
 */
import type { KyInstance } from "ky";
import { findModel } from "../../catalog/index.js";
import {
  InvalidRequestError,
  JobNotFoundError,
  ProviderUnavailableError,
  SondeError,
  StreamInterruptedError,
  UnsupportedOptionError,
} from "../../src/errors.js";
import type {
  CancelOutcome,
  EngineSession,
  ProviderContext,
  ResearchAdapter,
  ResolvedRequest,
  SnapshotReport,
  WireEvent,
} from "../../src/provider.js";
import { specVersion } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import {
  createHttpClient,
  errorFromFailure,
  type HttpFailure,
  submitOnce,
  toTransportError,
} from "../../src/transport/http.js";
import { parseData, readSseBatches } from "../../src/transport/sse.js";
import { ChunkMapper, DONE, INTERRUPTED } from "./map.js";
import { requestBody } from "./request.js";
import { openrouterSettingsSchema } from "./settings.js";
import { unavailableModel } from "./unavailable.js";
import { ErrorBody, Generation } from "./wire.js";

export const defaultBaseURL = "https://openrouter.ai/api/v1";

/** OpenRouter-specific readings of an error response; the rest is the status-code mapping. */
function classify(failure: HttpFailure): SondeError | undefined {
  const parsed = ErrorBody.safeParse(failure.body);
  const body = parsed.success ? parsed.data : {};
  const metadata = body.error?.metadata;
  const errorType = metadata?.error_type ?? undefined;
  const availability = body.availability ?? body.error?.availability ?? undefined;
  const common = { provider: "openrouter" as const, status: failure.status, requestId: failure.requestId };
  const message = `openrouter ${failure.status}: ${failure.message}`;
  if (failure.status === 403 && (metadata?.reasons || metadata?.flagged_input || errorType === "moderation"))
    return new InvalidRequestError(`${message}. The input was flagged by moderation; rephrase the query.`, {
      ...common,
      providerCode: "moderation",
    });
  if (failure.status === 404)
    return new InvalidRequestError(`${message}. OpenRouter does not serve this model; pick another.`, {
      ...common,
      providerCode: body.availability?.code ?? "model_not_found",
    });
  if (failure.status >= 500 && availability?.retryable === false)
    return new ProviderUnavailableError(
      `${message} (${availability.code ?? "unavailable"}; not retryable).`,
      {
        ...common,
        providerCode: availability.code ?? failure.code,
        retryable: false,
      },
    );
  if (failure.status >= 400 && failure.status < 500 && ![401, 402, 403, 408, 429].includes(failure.status))
    return new InvalidRequestError(message, { ...common, providerCode: errorType ?? failure.code });
  // The numeric `code` repeats the status; `error_type` is OpenRouter's own name for the failure.
  return errorFromFailure({ ...failure, code: errorType ?? failure.code });
}

function client(context: ProviderContext, forGet = false): KyInstance {
  const { settings } = context;
  return createHttpClient({
    provider: "openrouter",
    baseURL: settings.baseURL ?? defaultBaseURL,
    headers: {
      Authorization: `Bearer ${settings.apiKey ?? ""}`,
      "HTTP-Referer": typeof settings.appUrl === "string" ? settings.appUrl : undefined,
      "X-Title": typeof settings.appName === "string" ? settings.appName : undefined,
    },
    fetch: context.fetch,
    clock: context.clock,
    // Headers come back at once (keepalives follow); waiting longer than the idle limit is a dead request.
    timeoutMs: context.idleTimeoutMs,
    classify: forGet ? classifyGet : classify,
  });
}

function classifyGet(failure: HttpFailure): SondeError | undefined {
  if (failure.status === 404)
    return new JobNotFoundError(
      `openrouter 404: no record of this generation. OpenRouter records a generation's cost and tokens once it finishes, so it may still be running; or the id is unknown to this account.`,
      { provider: "openrouter", status: 404, requestId: failure.requestId },
    );
  return classify(failure);
}

/** Characters of the messages sent, for the cost estimate after a drop. */
function promptChars(request: ResolvedRequest): number {
  const messages = requestBody(request).messages as { content: string }[];
  return messages.reduce((sum, message) => sum + message.content.length, 0);
}

/**
 * The error for a lost stream. `started`: a chunk named the generation, so the ref exists
 * and the generation endpoint can tell what the run really cost.
 */
function notResumable(cause: unknown, started = false): StreamInterruptedError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  const cost = started
    ? ' Its usage is an estimate (costSource "estimate") of the cost so far; the upstream may keep running and ' +
      "billing, and research.get(job.toRef()) reads the provider's real charge from OpenRouter's generation " +
      "endpoint once the run has finished."
    : ' Its usage is an estimate (costSource "estimate"); no generation id had arrived, so the real charge is ' +
      "only in the OpenRouter dashboard.";
  return new StreamInterruptedError(
    `openrouter: the stream was lost (${detail}). OpenRouter cannot resume a stream, and Sonde did not resend ` +
      `the request (that would start and bill a second run); result() rejects with this error, whose .partial holds what arrived.${cost}`,
    { provider: "openrouter", retryable: false, cause },
  );
}

class OpenRouterSession implements EngineSession {
  readonly resumable = false;
  readonly #request: ResolvedRequest;
  readonly #context: ProviderContext;
  readonly #mapper: ChunkMapper;
  #generationId: string | undefined;
  #submitted = false;

  constructor(request: ResolvedRequest, context: ProviderContext) {
    this.#request = request;
    this.#context = context;
    this.#mapper = new ChunkMapper({
      model: request.modelInfo.id,
      fallbackId: () => this.#generationId,
      internalReasoning: request.modelInfo.pricing.internalReasoningPerM !== undefined,
      includeThinking: request.reasoning?.includeThinking !== false,
      promptChars: promptChars(request),
      logger: context.logger,
    });
  }

  get jobId(): string | undefined {
    return this.#mapper.jobId ?? this.#generationId;
  }

  async *connect({
    signal,
  }: {
    cursor: string | undefined;
    signal: AbortSignal;
  }): AsyncIterable<WireEvent | WireEvent[]> {
    // The core reconnects only resumable sessions; refuse anyway, as a second POST would be a second bill.
    if (this.#submitted) throw notResumable(new Error("the connection closed"));
    const http = client(this.#context);
    const response = await submitOnce("openrouter", signal, () =>
      http.post("chat/completions", { json: requestBody(this.#request), signal }),
    ).catch((error: unknown) => {
      throw unavailableModel(error, this.#request.modelInfo);
    });
    this.#submitted = true;
    this.#generationId = response.headers.get("x-generation-id") ?? undefined;
    if (response.headers.get("content-type")?.includes("application/json")) {
      // An error can come back as a 200 JSON body instead of a stream; no run was started.
      const body = await response.json().catch(() => undefined);
      const failure = failureOf(response, body);
      throw unavailableModel(classify(failure) ?? errorFromFailure(failure), this.#request.modelInfo);
    }
    try {
      // One array of wire events per network read (see `readSseBatches`).
      for await (const messages of readSseBatches(response, {
        provider: "openrouter",
        idleTimeoutMs: this.#context.idleTimeoutMs,
        signal,
      })) {
        const batch: WireEvent[] = [];
        for (const message of messages) {
          if (message.data.trim() === DONE) {
            batch.push({ data: DONE });
            yield batch;
            return;
          }
          let data: unknown;
          try {
            data = parseData(message, "openrouter");
          } catch (error) {
            if (batch.length > 0) yield batch; // what arrived before the malformed event
            throw error;
          }
          if (data !== undefined) batch.push({ data });
        }
        if (batch.length > 0) yield batch;
      }
    } catch (error) {
      if (signal.aborted || (SondeError.isInstance(error) && !error.retryable)) throw error;
      // Let the mapper put a cost on what arrived before the error ends the job.
      yield { data: INTERRUPTED };
      throw notResumable(error, this.#mapper.jobId !== undefined);
    }
  }

  map(wire: WireEvent) {
    return this.#mapper.map(wire);
  }

  resumeState(): Record<string, unknown> {
    return {};
  }
}

/** A 200 JSON body where a stream was expected: `{error: {code, message}}`, code = the real status. */
function failureOf(response: Response, body: unknown): HttpFailure {
  const parsed = ErrorBody.safeParse(body);
  const error = parsed.success ? parsed.data.error : undefined;
  return {
    provider: "openrouter",
    status: typeof error?.code === "number" ? error.code : 502,
    body,
    headers: response.headers,
    requestId: response.headers.get("x-generation-id") ?? undefined,
    retryAfterMs: undefined,
    message: error?.message ?? "the response was not an event stream",
    code: error?.metadata?.error_type ?? (error?.code == null ? undefined : String(error.code)),
  };
}

function upstreamOf(model: string): string {
  return model.slice(0, Math.max(0, model.indexOf("/")));
}

/** Upstreams that keep running and billing after the client disconnects (WIRE.md §5). */
const keepsBillingAfterAbort = new Set(["perplexity", "google"]);

export const openrouterAdapter: ResearchAdapter = {
  specVersion,
  provider: "openrouter",
  settingsSchema: openrouterSettingsSchema,
  supports: ["instructions", "asOf", "output", "reasoning"],

  validate(request) {
    if (request.reasoning?.summary !== undefined)
      throw new UnsupportedOptionError(
        "reasoning",
        `${request.modelInfo.id} streams its reasoning as is; OpenRouter has no reasoning summaries. Drop reasoning.summary (reasoning.includeThinking is supported).`,
      );
  },

  start(request, context) {
    return new OpenRouterSession(request, context);
  },

  attach(ref: JobRef): EngineSession {
    throw new UnsupportedOptionError(
      "attach",
      `openrouter: job ${ref.jobId} cannot be re-attached. An OpenRouter run is a single streamed HTTP request ` +
        "with no resume: once that connection is gone its events cannot be fetched again. The run may still have " +
        "finished and billed upstream; research.get(ref) reads its recorded cost and token counts. Start a new job to get a report.",
      { provider: "openrouter" },
    );
  },

  async get(ref, context): Promise<SnapshotReport> {
    const http = client(context, true);
    let body: unknown;
    try {
      const response = await http.get("generation", { searchParams: { id: ref.jobId } });
      body = await response.json();
    } catch (error) {
      throw toTransportError(error, "openrouter");
    }
    const parsed = Generation.safeParse(body);
    if (!parsed.success)
      throw new ProviderUnavailableError("openrouter: unexpected /generation response", {
        provider: "openrouter",
        retryable: false,
      });
    const data = parsed.data.data;
    const status =
      data.cancelled === true
        ? "cancelled"
        : data.finish_reason === "error"
          ? "failed"
          : data.finish_reason === "length" || data.finish_reason === "content_filter"
            ? "incomplete"
            : "completed";
    const reasoning = data.native_tokens_reasoning ?? 0;
    const internal = findModel(ref.model)?.pricing.internalReasoningPerM !== undefined;
    const completion = data.native_tokens_completion ?? data.tokens_completion;
    return {
      provider: "openrouter",
      model: ref.model,
      jobId: ref.jobId,
      status,
      usage: {
        modelCalls: 1,
        ...((data.native_tokens_prompt ?? data.tokens_prompt) != null && {
          inputTokens: (data.native_tokens_prompt ?? data.tokens_prompt)!,
        }),
        ...(completion != null && { outputTokens: Math.max(0, completion - reasoning) }),
        ...(internal ? { internalReasoningTokens: reasoning } : { reasoningTokens: reasoning }),
        ...(data.total_cost != null && { providerCostUSD: data.total_cost }),
      },
      raw: body,
    };
  },

  async cancel(ref): Promise<CancelOutcome> {
    const model = findModel(ref.model)?.model ?? ref.model.replace(/^openrouter:/, "");
    const upstream = upstreamOf(model);
    const detail = keepsBillingAfterAbort.has(upstream)
      ? `OpenRouter has no cancel endpoint, so Sonde closed the connection. ${upstream} does not stop on a disconnect: the run keeps processing and is billed in full.`
      : "OpenRouter has no cancel endpoint, so Sonde closed the connection. For upstreams that support it OpenRouter then stops the generation; what was generated until then is billed.";
    return { outcome: "transport-only", detail };
  },
};
