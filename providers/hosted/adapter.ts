/**
 * The hosted `agents.deep_research` job API (WIRE.md): invoke,
 * poll (honouring Retry-After), cancel with DELETE. The invoke has no idempotency key,
 * so it is sent once: a timeout is `IndeterminateSubmissionError`, and only an answer
 * with a status line and no job id (429, 503) may be retried by the core.
 */
import { IndeterminateSubmissionError, SondeError } from "../../src/errors.js";
import type {
  CancelReport,
  EngineSession,
  ProviderContext,
  ResearchAdapter,
  ResolvedRequest,
  SnapshotReport,
  WireEvent,
} from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import { createHttpClient, type HttpClient, submitOnce, toTransportError } from "../../src/transport/http.js";
import { getJson, pollUntilTerminal, pollWire } from "../../src/transport/poll.js";
import { finalEvents, isTerminalJob, JobMapper, statusOf } from "./map.js";
import { invokeBody } from "./request.js";
import { hostedSpec, requireBaseURL } from "./spec.js";
import { Invocation, Job } from "./wire.js";

/** How long cancel() waits for `canceled` after the DELETE before answering `pending` (`hosted.cancelWaitMs`). */
const CANCEL_WAIT_MS = 60_000;

function cancelWaitOf(context: ProviderContext): number {
  const value = context.settings.cancelWaitMs;
  return typeof value === "number" && value >= 0 ? value : CANCEL_WAIT_MS;
}

function client(context: ProviderContext): HttpClient {
  requireBaseURL(context);
  return createHttpClient({
    provider: "hosted",
    baseURL: context.settings.baseURL!,
    // The spec does not name the auth scheme; bearer is the convention.
    headers: { Authorization: `Bearer ${context.settings.apiKey ?? ""}` },
    fetch: context.fetch,
    clock: context.clock,
    timeoutMs: context.idleTimeoutMs,
    classify: async (failure) => (await import("./errors.js")).classify(failure),
  });
}

function jobPath(jobId: string): string {
  return `v1/jobs/${encodeURIComponent(jobId)}`;
}

/**
 * Where to poll: the invoke's `poll_url`, read like every other path as relative to the
 * configured base URL; an absolute one only when it lies under that base URL (the key
 * is never sent elsewhere). Otherwise the documented job path.
 */
function pollTarget(context: ProviderContext, jobId: string, pollUrl: unknown): string | URL {
  const base = context.settings.baseURL;
  if (typeof pollUrl !== "string" || !pollUrl || !base) return jobPath(jobId);
  if (!/^[a-z][a-z0-9+.-]*:/i.test(pollUrl)) return pollUrl.startsWith("//") ? jobPath(jobId) : pollUrl;
  try {
    const url = new URL(pollUrl);
    const root = new URL(base.endsWith("/") ? base : `${base}/`);
    if (url.origin === root.origin && url.pathname.startsWith(root.pathname)) return url;
  } catch {
    // fall through to the documented path
  }
  return jobPath(jobId);
}

function pollOnce(http: HttpClient, target: string | URL, context: ProviderContext, signal?: AbortSignal) {
  return getJson(http, target, { provider: "hosted", clock: context.clock, signal });
}

interface SessionInit {
  request?: ResolvedRequest;
  jobId?: string;
  pollUrl?: unknown;
  reservedUSD?: number;
  model: string;
}

class HostedSession implements EngineSession {
  readonly resumable = true;
  readonly #init: SessionInit;
  readonly #context: ProviderContext;
  readonly #mapper: JobMapper;
  #jobId: string | undefined;
  #pollUrl: unknown;
  #reservedUSD: number | undefined;

  constructor(init: SessionInit, context: ProviderContext) {
    this.#init = init;
    this.#context = context;
    this.#jobId = init.jobId;
    this.#pollUrl = init.pollUrl;
    this.#reservedUSD = init.reservedUSD;
    this.#mapper = new JobMapper({
      model: init.model,
      emitCreated: init.jobId === undefined,
      reservedUSD: () => this.#reservedUSD,
      logger: context.logger,
    });
  }

  get jobId(): string | undefined {
    return this.#jobId;
  }

  async *connect({ signal }: { cursor: string | undefined; signal: AbortSignal }): AsyncIterable<WireEvent> {
    const http = client(this.#context);
    let justInvoked = false;
    if (this.#jobId === undefined) {
      const { invocation, raw } = await this.#invoke(http, signal);
      this.#jobId = invocation.job_id;
      this.#pollUrl = invocation.poll_url ?? undefined;
      this.#reservedUSD = invocation.estimated_cost_usd ?? undefined;
      justInvoked = true;
      yield { data: raw };
    }
    const target = pollTarget(this.#context, this.#jobId, this.#pollUrl);
    yield* pollWire({
      provider: "hosted",
      fetch: (s) => pollOnce(http, target, this.#context, s),
      isTerminal: isTerminalJob,
      policy: this.#context.retry,
      signal,
      logger: this.#context.logger,
      // Right after the invoke, give the job a moment; an attach or a reconnect looks at once.
      immediate: !justInvoked,
    });
  }

  async #invoke(http: HttpClient, signal: AbortSignal): Promise<{ invocation: Invocation; raw: unknown }> {
    const request = this.#init.request!;
    return submitOnce("hosted", signal, async () => {
      const response = await http.post(`v1/agents/${encodeURIComponent(request.providerModel)}/invoke`, {
        json: invokeBody(request, "perplexity"),
        signal,
        throwHttpErrors: false,
      });
      const text = await response.text();
      let raw: unknown = text;
      try {
        raw = text ? JSON.parse(text) : undefined;
      } catch {
        // keep the text for the error message
      }
      const invocation = Invocation.safeParse(raw, UNCOMPILED);
      // A 503 that still names a job means the job exists: follow it rather than invoke again.
      if (invocation.success && (response.ok || response.status === 503))
        return { invocation: invocation.data, raw };
      if (response.ok)
        throw new IndeterminateSubmissionError(
          "hosted: the invoke was accepted but the answer named no job id, so the job cannot be followed. " +
            "It may be running and billing; Sonde did not invoke again. Check the service before submitting again.",
          { provider: "hosted", status: response.status },
        );
      // A refused invoke is a cold path: its reading loads with the first one.
      const [{ failureFromResponse }, { classify }] = await Promise.all([
        import("../../src/transport/error-body.js"),
        import("./errors.js"),
      ]);
      const failure = failureFromResponse("hosted", response, raw, this.#context.clock);
      // Only a 503 says the service turned the invoke away; any other 5xx (a gateway's 502/504
      // above all) may sit in front of a job that was created, so it is never invoked again.
      if (response.status >= 500 && response.status !== 503)
        throw new IndeterminateSubmissionError(
          `hosted ${response.status}: ${failure.message}. The invoke may or may not have started a job, and the ` +
            "answer named none; Sonde did not invoke again (that could start and bill a second job). " +
            "Check the service before submitting again.",
          { provider: "hosted", status: response.status, requestId: failure.requestId },
        );
      throw classify(failure);
    });
  }

  map(wire: WireEvent) {
    return this.#mapper.map(wire);
  }

  resumeState(): Record<string, unknown> {
    return {
      ...(typeof this.#pollUrl === "string" && { pollUrl: this.#pollUrl }),
      ...(this.#reservedUSD !== undefined && { reservedUSD: this.#reservedUSD }),
    };
  }
}

function snapshotOf(ref: JobRef, raw: unknown): SnapshotReport {
  const parsed = Job.safeParse(raw, UNCOMPILED);
  const status = parsed.success ? (statusOf(parsed.data.status) ?? "running") : "running";
  const snapshot: SnapshotReport = { provider: "hosted", model: ref.model, jobId: ref.jobId, status, raw };
  if (!isTerminalJob(raw)) {
    const held = (parsed.success ? parsed.data.estimated_cost_usd : undefined) ?? ref.resume.reservedUSD;
    if (typeof held === "number") snapshot.reservedUSD = held;
    return snapshot;
  }
  let report = "";
  const citations = [];
  for (const event of finalEvents(raw)) {
    if (event.type === "text") report += event.delta;
    else if (event.type === "citation") citations.push(event.citation);
    else if (event.type === "usage") snapshot.usage = event.usage;
    else if (event.type === "error")
      snapshot.error = { code: event.error.code, message: event.error.message };
  }
  if (status === "completed") Object.assign(snapshot, { report, citations });
  return snapshot;
}

/** The hosted engine: its spec (spec.ts) with the calls that need its session and wire schemas. */
export const hostedAdapter: ResearchAdapter = {
  ...hostedSpec,

  start(request, context) {
    requireBaseURL(context);
    return new HostedSession({ request, model: request.modelInfo.id }, context);
  },

  attach(ref, context) {
    requireBaseURL(context);
    const reserved = ref.resume.reservedUSD;
    return new HostedSession(
      {
        jobId: ref.jobId,
        pollUrl: ref.resume.pollUrl,
        model: ref.model,
        ...(typeof reserved === "number" && { reservedUSD: reserved }),
      },
      context,
    );
  },

  async get(ref, context) {
    const http = client(context);
    const { value } = await pollOnce(http, pollTarget(context, ref.jobId, ref.resume.pollUrl), context);
    return snapshotOf(ref, value);
  },

  /**
   * DELETE, then poll until the job reports `canceled`. A 409 means it had already
   * ended: completion won the race. A cancelled job that consumed work reports its
   * charge, which comes back as `usage`.
   */
  async cancel(ref, context): Promise<CancelReport> {
    const http = client(context);
    const target = pollTarget(context, ref.jobId, ref.resume.pollUrl);
    let accepted = true;
    try {
      await http.delete(jobPath(ref.jobId));
    } catch (error) {
      if (!(SondeError.isInstance(error) && error.status === 409)) throw toTransportError(error, "hosted");
      accepted = false;
    }
    let last: unknown;
    const waitMs = cancelWaitOf(context);
    const signal = AbortSignal.timeout(waitMs);
    try {
      if (!accepted) {
        last = (await pollOnce(http, target, context)).value;
      } else {
        for await (const snapshot of pollUntilTerminal({
          provider: "hosted",
          fetch: (s) => pollOnce(http, target, context, s),
          isTerminal: isTerminalJob,
          policy: context.retry,
          signal,
          immediate: true,
          logger: context.logger,
        }))
          last = snapshot;
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
    const snapshot = snapshotOf(ref, last);
    const usage = snapshot.usage && { usage: snapshot.usage };
    if (!isTerminalJob(last))
      return {
        outcome: "pending",
        finalStatus: snapshot.status,
        detail: `The service accepted the cancel but the job had not reported canceled after ${waitMs / 1000} s; research.get(ref) shows when it does.`,
      };
    if (accepted && snapshot.status === "cancelled")
      return { outcome: "cancelled", finalStatus: "cancelled", ...usage };
    return {
      outcome: "already-terminal",
      finalStatus: snapshot.status,
      detail:
        snapshot.status === "cancelled"
          ? "The job had already been cancelled."
          : `The job had already ${snapshot.status === "completed" ? "completed" : "ended"} when the cancel arrived: its completion won the race.`,
      ...usage,
    };
  },
};
