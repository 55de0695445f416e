/**
 * Perplexity async chat completions (shared/providers/perplexity-async.md): submit a
 * job, poll it, receive the report whole. The submit carries an idempotency key (the
 * request's, else one generated per start() and kept in the ref), which makes it the
 * one submit Sonde may resend after a timeout or reset: the key means at most one job.
 */
import type { KyInstance } from "ky";
import {
  IdempotencyConflictError,
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
import { createHttpClient, type HttpFailure, toTransportError } from "../../src/transport/http.js";
import { FINAL_CURSOR, getJson, pollWire } from "../../src/transport/poll.js";
import { finalEvents, isTerminalJob, JobMapper, statusOf } from "./map.js";
import { submitBody } from "./request.js";
import { AsyncJob } from "./wire.js";

export const defaultBaseURL = "https://api.perplexity.ai";
/** The SDK's path; newer docs also show `/v1/async/sonar` (settings.asyncPath). */
export const defaultAsyncPath = "/async/chat/completions";

function classify(failure: HttpFailure): SondeError | undefined {
  if (failure.status === 409)
    return new IdempotencyConflictError(
      `perplexity 409: ${failure.message}. The idempotency key was already used for another request; ` +
        "use a new idempotencyKey, or attach the job that key created.",
      { provider: "perplexity", status: 409, requestId: failure.requestId },
    );
  return undefined;
}

function client(context: ProviderContext): KyInstance {
  return createHttpClient({
    provider: "perplexity",
    baseURL: context.settings.baseURL ?? defaultBaseURL,
    headers: { Authorization: `Bearer ${context.settings.apiKey ?? ""}` },
    fetch: context.fetch,
    clock: context.clock,
    timeoutMs: context.idleTimeoutMs,
    classify,
  });
}

function asyncPath(context: ProviderContext): string {
  const path = context.settings.asyncPath;
  return (typeof path === "string" && path ? path : defaultAsyncPath).replace(/\/$/, "");
}

function pollOnce(http: KyInstance, target: string | URL, context: ProviderContext, signal?: AbortSignal) {
  return getJson(http, target, { provider: "perplexity", clock: context.clock, signal });
}

interface SessionInit {
  request?: ResolvedRequest;
  jobId?: string;
  /** Undefined only for a ref that never carried one. */
  idempotencyKey: string | undefined;
  model: string;
  includeThinking: boolean;
}

class PerplexitySession implements EngineSession {
  readonly resumable = true;
  readonly #init: SessionInit;
  readonly #context: ProviderContext;
  readonly #mapper: JobMapper;
  #jobId: string | undefined;

  constructor(init: SessionInit, context: ProviderContext) {
    this.#init = init;
    this.#context = context;
    this.#jobId = init.jobId;
    this.#mapper = new JobMapper({
      model: init.model,
      emitCreated: init.jobId === undefined,
      includeThinking: init.includeThinking,
      logger: context.logger,
    });
  }

  get jobId(): string | undefined {
    return this.#jobId;
  }

  async *connect({ signal }: { cursor: string | undefined; signal: AbortSignal }): AsyncIterable<WireEvent> {
    const http = client(this.#context);
    let justSubmitted = false;
    if (this.#jobId === undefined) {
      const submitted = await this.#submit(http, signal);
      this.#jobId = submitted.id;
      justSubmitted = true;
      yield { data: submitted.raw };
      if (isTerminalJob(submitted.raw)) {
        yield { cursor: FINAL_CURSOR, data: submitted.raw };
        return;
      }
    }
    const path = `${asyncPath(this.#context)}/${encodeURIComponent(this.#jobId)}`;
    yield* pollWire({
      provider: "perplexity",
      fetch: (s) => pollOnce(http, path, this.#context, s),
      isTerminal: isTerminalJob,
      policy: this.#context.retry,
      signal,
      // Right after a submit, give the job a moment; an attach or a reconnect looks at once.
      immediate: !justSubmitted,
    });
  }

  /**
   * One submit. A status-line error is thrown as mapped (429/5xx stay retryable). A reset or
   * timeout is thrown as a retryable `StreamInterruptedError`: the core then calls connect()
   * again, which resends with the same key, so Perplexity returns the job it may have created.
   */
  async #submit(http: KyInstance, signal: AbortSignal): Promise<{ id: string; raw: unknown }> {
    // A session that submits was started, and start() always sets a key.
    const key = this.#init.idempotencyKey!;
    let raw: unknown;
    try {
      const response = await http.post(asyncPath(this.#context), {
        json: submitBody(this.#init.request!, key),
        signal,
      });
      raw = await response.json();
    } catch (error) {
      if (SondeError.isInstance(error) || signal.aborted) throw toTransportError(error, "perplexity", signal);
      const detail = error instanceof Error ? error.message : String(error);
      throw new StreamInterruptedError(
        `perplexity: the job submission got no answer (${detail}). It is safe to resend with the same ` +
          `idempotency key ("${key}"), which Sonde does automatically; to resubmit by hand, pass idempotencyKey: "${key}".`,
        { provider: "perplexity", cause: error },
      );
    }
    const job = AsyncJob.safeParse(raw);
    if (!job.success)
      // Retrying is safe for the same reason: the key returns the same job.
      throw new ProviderUnavailableError("perplexity: the submit answered without a job id.", {
        provider: "perplexity",
      });
    return { id: job.data.id, raw };
  }

  map(wire: WireEvent) {
    return this.#mapper.map(wire);
  }

  resumeState(): Record<string, unknown> {
    return {
      ...(this.#init.idempotencyKey !== undefined && { idempotencyKey: this.#init.idempotencyKey }),
      // The final batch is replayed on attach; it must map to the same events, or offsets shift.
      ...(!this.#init.includeThinking && { includeThinking: false }),
    };
  }
}

export const perplexityAdapter: ResearchAdapter = {
  specVersion,
  provider: "perplexity",
  supports: ["instructions", "asOf", "output", "reasoning", "idempotencyKey"],

  validate(request) {
    if (request.reasoning?.summary !== undefined)
      throw new UnsupportedOptionError(
        "reasoning",
        `${request.modelInfo.id} returns its reasoning as is; Perplexity has no reasoning summaries. Drop reasoning.summary (reasoning.includeThinking is supported).`,
      );
  },

  start(request, context) {
    return new PerplexitySession(
      {
        request,
        idempotencyKey: request.idempotencyKey ?? `sonde-${globalThis.crypto.randomUUID()}`,
        model: request.modelInfo.id,
        includeThinking: request.reasoning?.includeThinking !== false,
      },
      context,
    );
  },

  attach(ref: JobRef, context) {
    const key = ref.resume.idempotencyKey;
    return new PerplexitySession(
      {
        jobId: ref.jobId,
        idempotencyKey: typeof key === "string" ? key : undefined,
        model: ref.model,
        includeThinking: ref.resume.includeThinking !== false,
      },
      context,
    );
  },

  async get(ref, context): Promise<SnapshotReport> {
    const path = `${asyncPath(context)}/${encodeURIComponent(ref.jobId)}`;
    const { value } = await pollOnce(client(context), path, context);
    const parsed = AsyncJob.safeParse(value);
    if (!parsed.success)
      throw new ProviderUnavailableError("perplexity: the job lookup returned no status.", {
        provider: "perplexity",
        retryable: true,
      });
    const job = parsed.data;
    const snapshot: SnapshotReport = {
      provider: "perplexity",
      model: ref.model,
      jobId: ref.jobId,
      status: statusOf(job.status) ?? "running",
      raw: value,
    };
    if (!isTerminalJob(value)) return snapshot;
    let report = "";
    const citations = [];
    for (const event of finalEvents(job, { includeThinking: false })) {
      if (event.type === "text") report += event.delta;
      else if (event.type === "citation") citations.push(event.citation);
      else if (event.type === "usage") snapshot.usage = event.usage;
      else if (event.type === "status") snapshot.status = event.status;
      else if (event.type === "error")
        snapshot.error = { code: event.error.code, message: event.error.message };
    }
    if (job.status === "COMPLETED") Object.assign(snapshot, { report, citations });
    return snapshot;
  },

  async cancel(): Promise<CancelOutcome> {
    return {
      outcome: "transport-only",
      detail:
        "Perplexity's async API has no cancel endpoint: the job keeps running and is billed when it finishes. " +
        "Sonde stopped polling; attach the ref later to collect the report.",
    };
  },
};
