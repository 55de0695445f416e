/**
 * `sonde/tracing`: every research job as an OpenTelemetry span, named and attributed after
 * the GenAI semantic conventions (an `invoke_agent` span: the job is a remote agent run)
 * plus Sonde's own `sonde.*` attributes. Reconnects, resumes, fallbacks to polling,
 * cancels and errors are span events; a failed job sets the span's status.
 *
 * `@opentelemetry/api` is an optional peer: only this entry imports it, and the core never
 * imports this entry, so a client without `telemetry` neither loads nor needs it.
 *
 * ```ts
 * import { Sonde } from "sonde";
 * import { sondeTracing } from "sonde/tracing";
 * const client = new Sonde({ telemetry: sondeTracing() }); // the globally registered tracer provider
 * ```
 */
import {
  type Attributes,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from "@opentelemetry/api";
import type { ProviderName, ResearchEvent, Usage } from "../events.js";
import type { JobDescription, JobObserver, JobSignal, SondeTelemetry } from "../observe.js";

export interface SondeTracingOptions {
  /** Where spans go. @defaultValue the globally registered provider (`trace.getTracerProvider()`) */
  tracerProvider?: TracerProvider;
  /** A tracer to use as is; wins over `tracerProvider`. */
  tracer?: Tracer;
}

/** Instrumentation scope of Sonde's spans. */
export const TRACER_NAME = "sonde";

/** `gen_ai.provider.name` values: the conventions' well-known names where one exists. */
const genAiProvider: Record<ProviderName, string> = {
  openai: "openai",
  gemini: "gcp.gemini",
  openrouter: "openrouter",
  perplexity: "perplexity",
  hosted: "sonde.hosted",
  portable: "sonde.portable",
};

/**
 * Turns jobs into spans; pass it as `new Sonde({ telemetry: sondeTracing() })`.
 * @example
 * ```ts
 * import { sondeTracing } from "sonde/tracing";
 *
 * const client = new Sonde({ telemetry: sondeTracing() });
 * ```
 */
export function sondeTracing(options: SondeTracingOptions = {}): SondeTelemetry {
  // Resolved per job, so a provider registered after the client was built is still used.
  const tracer = () =>
    options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME);
  return { observeJob: (job) => traceJob(tracer(), job) };
}

function traceJob(tracer: Tracer, job: JobDescription): JobObserver {
  const clean = job.redact;
  const attributes: Attributes = {
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.provider.name": genAiProvider[job.provider],
    // The name older GenAI conventions (<= 1.36) use for the provider; dashboards still key on it.
    "gen_ai.system": genAiProvider[job.provider],
    "gen_ai.request.model": clean(job.providerModel),
    "gen_ai.agent.name": clean(job.providerModel),
    "sonde.engine": job.provider,
    "sonde.model": clean(job.model),
    "sonde.attached": job.attached,
    "sonde.poll_only": job.pollOnly,
  };
  if (job.jobId) attributes["sonde.job.id"] = attributes["gen_ai.response.id"] = clean(job.jobId);
  if (job.maxCostUSD !== undefined) attributes["sonde.budget.max_cost_usd"] = job.maxCostUSD;
  const span = tracer.startSpan(`invoke_agent ${clean(job.providerModel)}`, {
    // The portable engine runs in this process; every other engine is a remote service.
    kind: job.provider === "portable" ? SpanKind.INTERNAL : SpanKind.CLIENT,
    attributes,
  });
  const counts = {
    searches: 0,
    reconnects: 0,
    retries: 0,
    resumes: 0,
    pollFallbacks: 0,
    gaps: 0,
    citations: 0,
  };
  let ended = false;
  return (signal: JobSignal) => {
    if (ended) return;
    switch (signal.type) {
      case "event":
        onEvent(span, signal.event, counts, clean);
        break;
      case "reconnect":
        counts.reconnects++;
        span.addEvent("sonde.reconnect", { "sonde.error": clean(signal.error) });
        break;
      case "retry":
        counts.retries++;
        span.addEvent("sonde.retry", {
          "sonde.attempt": signal.attempt,
          "sonde.delay_ms": signal.delayMs,
          "sonde.error": clean(signal.error),
        });
        break;
      case "resume":
        counts.resumes++;
        span.addEvent(
          "sonde.resume",
          signal.cursor !== undefined ? { "sonde.cursor": clean(signal.cursor) } : {},
        );
        break;
      case "poll-fallback":
        counts.pollFallbacks++;
        span.addEvent("sonde.poll_fallback");
        break;
      case "cancel":
        span.addEvent("sonde.cancel", {
          "sonde.cancel.by": signal.by,
          "sonde.cancel.outcome": signal.outcome.outcome,
          ...(signal.outcome.detail && { "sonde.cancel.detail": clean(signal.outcome.detail) }),
        });
        break;
      case "end":
        ended = true;
        finish(span, signal, counts, clean);
        break;
    }
  };
}

function onEvent(
  span: Span,
  event: ResearchEvent,
  counts: { searches: number; gaps: number; citations: number },
  clean: (text: string) => string,
): void {
  switch (event.type) {
    case "created":
      span.setAttributes({ "sonde.job.id": clean(event.jobId), "gen_ai.response.id": clean(event.jobId) });
      break;
    case "search":
      if (event.action === "search" && event.state === "started") counts.searches++;
      break;
    case "citation":
      counts.citations++;
      break;
    case "gap":
      counts.gaps++;
      if (event.gap.kind === "cost-cap")
        span.addEvent("sonde.cost_cap", { "sonde.gap.detail": clean(event.gap.detail) });
      break;
    case "error":
      span.addEvent("sonde.error", {
        "sonde.error.code": clean(event.error.code),
        "sonde.error.message": clean(event.error.message),
        "sonde.error.retryable": event.error.retryable,
        ...(event.error.status !== undefined && { "http.response.status_code": event.error.status }),
      });
      break;
  }
}

function usageAttributes(usage: Usage): Attributes {
  return {
    "gen_ai.usage.input_tokens": usage.inputTokens,
    // GenAI's output tokens are every generated token; Sonde keeps reasoning apart.
    "gen_ai.usage.output_tokens": usage.outputTokens + usage.reasoningTokens + usage.internalReasoningTokens,
    "sonde.usage.reasoning_tokens": usage.reasoningTokens + usage.internalReasoningTokens,
    "sonde.usage.searches": usage.searches,
    "sonde.usage.fetches": usage.fetches,
    "sonde.cost_usd": usage.costUSD,
    "sonde.cost_source": usage.costSource,
  };
}

function finish(
  span: Span,
  signal: Extract<JobSignal, { type: "end" }>,
  counts: {
    searches: number;
    reconnects: number;
    retries: number;
    resumes: number;
    pollFallbacks: number;
    gaps: number;
    citations: number;
  },
  clean: (text: string) => string,
): void {
  span.setAttributes({
    ...usageAttributes(signal.usage),
    "sonde.status": signal.status,
    // Search actions seen in the stream, or the engine's own count when it is higher.
    "sonde.searches": Math.max(counts.searches, signal.usage.searches),
    "sonde.reconnects": counts.reconnects,
    "sonde.retries": counts.retries,
    "sonde.resumes": counts.resumes,
    "sonde.poll_fallbacks": counts.pollFallbacks,
    "sonde.gaps": counts.gaps,
    "sonde.citations": counts.citations,
  });
  const error = signal.error;
  if (signal.status === "aborted") {
    // Our connection stopped, not the job: it may still run and is attachable; not a failure.
    span.addEvent("sonde.aborted", error ? { "sonde.reason": clean(error.message) } : {});
  } else if (error) {
    const code = (error as { code?: unknown }).code;
    const type = typeof code === "string" ? code : error.name;
    const message = clean(error.message);
    span.setAttribute("error.type", clean(type));
    span.addEvent("exception", { "exception.type": clean(error.name), "exception.message": message });
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  } else if (signal.status === "failed") {
    span.setAttribute("error.type", "job_failed");
    span.setStatus({ code: SpanStatusCode.ERROR, message: "the job failed" });
  }
  span.end();
}
