/**
 * OpenRouter Chat Completions (WIRE.md): one long streamed
 * request with no job id, no resume and no server-side cancel. The generation id of
 * the first chunk stands in for a job id. A drop ends the job: Sonde never resends a
 * request that may already be running and billing upstream.
 */
import { findIn } from "../../catalog/lookup.js";
import { openrouter } from "../../catalog/openrouter.js";
import {
  JobNotFoundError,
  ProviderUnavailableError,
  SondeError,
  StreamInterruptedError,
} from "../../src/errors.js";
import { chunkBatches } from "../../src/protocols/chat-completions/stream.js";
import { outputTokensOf } from "../../src/protocols/chat-completions/usage.js";
import type {
  CancelOutcome,
  EngineSession,
  ProviderContext,
  ResearchAdapter,
  ResolvedRequest,
  SnapshotReport,
  WireEvent,
} from "../../src/provider.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import {
  createHttpClient,
  type HttpClient,
  type HttpFailure,
  submitOnce,
  toTransportError,
} from "../../src/transport/http.js";
import { sseParser } from "../../src/transport/sse.js";
import { ChunkMapper, INTERRUPTED } from "./map.js";
import { requestBody } from "./request.js";
import { openrouterSpec, refuseAttach } from "./spec.js";
import { unavailableModel } from "./unavailable.js";
import { usageReportOf } from "./usage.js";
import { Generation } from "./wire.js";

export const defaultBaseURL = "https://openrouter.ai/api/v1";

/** The protocol's readings of an error body, in OpenRouter's words (loaded with the first failure). */
async function classify(failure: HttpFailure): Promise<SondeError> {
  const { classifyChatFailure } = await import("../../src/protocols/chat-completions/http-errors.js");
  return classifyChatFailure(failure, {
    provider: "openrouter",
    notServed: "OpenRouter does not serve this model; pick another.",
  });
}

function client(context: ProviderContext, forGet = false): HttpClient {
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

function classifyGet(failure: HttpFailure): SondeError | Promise<SondeError> {
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
    await sseParser("openrouter");
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
      const { failureOfBody } = await import("../../src/protocols/chat-completions/http-errors.js");
      throw unavailableModel(
        await classify(failureOfBody("openrouter", response, body)),
        this.#request.modelInfo,
      );
    }
    try {
      // One array of wire events per network read; the batch with `[DONE]` ends the stream.
      yield* chunkBatches(response, {
        provider: "openrouter",
        idleTimeoutMs: this.#context.idleTimeoutMs,
        signal,
      });
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

function upstreamOf(model: string): string {
  return model.slice(0, Math.max(0, model.indexOf("/")));
}

/** Upstreams that keep running and billing after the client disconnects (WIRE.md §5). */
const keepsBillingAfterAbort = new Set(["perplexity", "google"]);

/** The OpenRouter engine: its spec (spec.ts) with the calls that need the Chat Completions protocol. */
export const openrouterAdapter: ResearchAdapter = {
  ...openrouterSpec,

  start(request, context) {
    return new OpenRouterSession(request, context);
  },

  attach: refuseAttach,

  async get(ref, context): Promise<SnapshotReport> {
    const http = client(context, true);
    let body: unknown;
    try {
      const response = await http.get("generation", { searchParams: { id: ref.jobId } });
      body = await response.json();
    } catch (error) {
      throw toTransportError(error, "openrouter");
    }
    const parsed = Generation.safeParse(body, UNCOMPILED);
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
    const counts = {
      prompt: data.native_tokens_prompt ?? data.tokens_prompt,
      completion: data.native_tokens_completion ?? data.tokens_completion,
      reasoning: data.native_tokens_reasoning,
    };
    // The same reasoning rule as the stream's usage block (it has no total to tell by).
    const output = outputTokensOf(counts);
    const tokens = {
      reasoningTokens: counts.reasoning ?? 0,
      ...(counts.prompt != null && { inputTokens: counts.prompt }),
      ...(output !== undefined && { outputTokens: output }),
      ...(data.total_cost != null && { costUSD: data.total_cost }),
    };
    const internal = findIn(openrouter, ref.model)?.pricing.internalReasoningPerM !== undefined;
    return {
      provider: "openrouter",
      model: ref.model,
      jobId: ref.jobId,
      status,
      usage: usageReportOf(tokens, internal),
      raw: body,
    };
  },

  async cancel(ref): Promise<CancelOutcome> {
    const model = findIn(openrouter, ref.model)?.model ?? ref.model.replace(/^openrouter:/, "");
    const upstream = upstreamOf(model);
    const detail = keepsBillingAfterAbort.has(upstream)
      ? `OpenRouter has no cancel endpoint, so Sonde closed the connection. ${upstream} does not stop on a disconnect: the run keeps processing and is billed in full.`
      : "OpenRouter has no cancel endpoint, so Sonde closed the connection. For upstreams that support it OpenRouter then stops the generation; what was generated until then is billed.";
    return { outcome: "transport-only", detail };
  },
};
