/**
 * Hosted job snapshots → research events. The invoke answer announces the job and
 * the amount reserved for it; polls in progress are `status` heartbeats carrying that
 * reservation; the terminal snapshot is one batch: the report as one `text` event,
 * citations, the final charge as usage, and the status.
 */
import { normalizeUrl } from "../../src/aggregate.js";
import type { Citation, JobStatus } from "../../src/events.js";
import type { Logger, MappedEvent, WireEvent } from "../../src/provider.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import { FINAL_CURSOR } from "../../src/transport/final-cursor.js";
import { ErrorDetail, HostedCitation, Invocation, Job, Result } from "./wire.js";

/** Cursor of the terminal snapshot's batch, so a ref taken inside it resumes at the right event. */

export function statusOf(status: string | undefined): JobStatus | undefined {
  switch (status) {
    case "queued":
      return "queued";
    case "running":
      return "running";
    case "completed":
      return "completed";
    case "failed":
      return "failed";
    case "canceled":
    case "cancelled":
      return "cancelled";
    default:
      return undefined;
  }
}

export function isTerminalJob(data: unknown): boolean {
  const parsed = Job.safeParse(data, UNCOMPILED);
  const status = parsed.success ? statusOf(parsed.data.status) : undefined;
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** The result of a terminal job: in `result` (the spec's example), else at the top level. */
export function resultOf(job: Job, raw: unknown): Result | undefined {
  const nested = Result.safeParse(job.result, UNCOMPILED);
  if (job.result && nested.success) return nested.data;
  const top = Result.safeParse(raw, UNCOMPILED);
  return top.success && (top.data.content != null || top.data.charge_usd != null) ? top.data : undefined;
}

function errorOf(job: Job, result: unknown): { code: string; message: string } {
  for (const candidate of [job.error, (result as { error?: unknown } | undefined)?.error]) {
    if (typeof candidate === "string") return { code: "job_failed", message: candidate };
    const detail = ErrorDetail.safeParse(candidate, UNCOMPILED);
    if (candidate && detail.success && detail.data.message)
      return {
        code: detail.data.code != null ? String(detail.data.code) : "job_failed",
        message: detail.data.message,
      };
  }
  return { code: "job_failed", message: job.error_message ?? job.message ?? "no reason given" };
}

function citationsOf(result: Result): Citation[] {
  const out: Citation[] = [];
  const seen = new Set<string>();
  for (const raw of result.citations ?? []) {
    const parsed = HostedCitation.safeParse(raw, UNCOMPILED);
    if (!parsed.success) continue;
    const key = normalizeUrl(parsed.data.url);
    if (seen.has(key)) continue;
    seen.add(key);
    const citation: Citation = { url: parsed.data.url };
    if (parsed.data.title) citation.title = parsed.data.title;
    if (parsed.data.snippet) citation.snippet = parsed.data.snippet;
    out.push(citation);
  }
  return out;
}

/** The terminal batch: report, citations, the charge, the status. */
export function finalEvents(raw: unknown): MappedEvent[] {
  const parsed = Job.safeParse(raw, UNCOMPILED);
  if (!parsed.success) return [];
  const job = parsed.data;
  const status = statusOf(job.status) ?? "failed";
  const result = resultOf(job, raw);
  const events: MappedEvent[] = [];
  if (status === "completed" && result) {
    if (result.content) events.push({ type: "text", delta: result.content });
    for (const citation of citationsOf(result)) events.push({ type: "citation", citation });
  }
  if (status === "failed") {
    const error = errorOf(job, job.result);
    events.push({
      type: "error",
      error: { code: error.code, message: `hosted: the job failed (${error.message}).`, retryable: false },
    });
  }
  // The charge is what the service billed, also for a job canceled after it consumed work.
  if (result?.charge_usd != null)
    events.push({ type: "usage", usage: { providerCostUSD: result.charge_usd } });
  events.push({ type: "status", status });
  return events;
}

export interface MapperOptions {
  model: string;
  /** Only a session that invoked the job announces it; an attached one already has it. */
  emitCreated: boolean;
  /** The amount held for the job (from the invoke answer, or the ref). */
  reservedUSD: () => number | undefined;
  logger: Logger;
}

export class JobMapper {
  readonly #options: MapperOptions;
  #created = false;

  constructor(options: MapperOptions) {
    this.#options = options;
  }

  map(wire: WireEvent): MappedEvent[] {
    if (wire.cursor === FINAL_CURSOR) return finalEvents(wire.data);
    const events: MappedEvent[] = [];
    if (this.#options.emitCreated && !this.#created) {
      const invocation = Invocation.safeParse(wire.data, UNCOMPILED);
      if (invocation.success) {
        this.#created = true;
        events.push({
          type: "created",
          jobId: invocation.data.job_id,
          provider: "hosted",
          model: this.#options.model,
        });
      }
    }
    const parsed = Job.safeParse(wire.data, UNCOMPILED);
    if (!parsed.success) {
      if (!events.length) this.#options.logger.debug("hosted: ignoring an unrecognized job snapshot");
      return events;
    }
    const status = statusOf(parsed.data.status);
    if (status === undefined)
      this.#options.logger.debug("hosted: unknown job status", { status: parsed.data.status });
    // A terminal snapshot arrives again as the final batch; here only progress counts.
    if (status === undefined || status === "queued" || status === "running") {
      const reservedUSD = parsed.data.estimated_cost_usd ?? this.#options.reservedUSD();
      events.push({
        type: "status",
        status: status ?? "running",
        ...(reservedUSD != null && { reservedUSD }),
      });
    }
    return events;
  }
}
