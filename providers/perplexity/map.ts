/**
 * Perplexity async job snapshots → research events. Polls in progress become `status`
 * heartbeats; the terminal snapshot becomes one batch: searches it reports, the
 * leading `<think>` block as `thinking`, the report as one `text` event, citations,
 * usage with Perplexity's own charge, and the final status.
 */
import { normalizeUrl } from "../../src/aggregate.js";
import type { Citation, JobStatus } from "../../src/events.js";
import type { Logger, MappedEvent, UsageReport, WireEvent } from "../../src/provider.js";
import { FINAL_CURSOR } from "../../src/transport/poll.js";
import { AsyncJob, CompletionResponse, type CompletionUsage, ReasoningStep, SearchResult } from "./wire.js";

/** Cursor of the terminal snapshot's batch, so a ref taken inside it resumes at the right event. */

export function statusOf(status: string | undefined): JobStatus | undefined {
  switch (status) {
    case "CREATED":
      return "queued";
    case "IN_PROGRESS":
      return "running";
    case "COMPLETED":
      return "completed";
    case "FAILED":
      return "failed";
    default:
      return undefined;
  }
}

export function isTerminalJob(data: unknown): boolean {
  const parsed = AsyncJob.safeParse(data);
  return parsed.success && (parsed.data.status === "COMPLETED" || parsed.data.status === "FAILED");
}

/**
 * A leading `<think>…</think>` block is reasoning, not report (perplexity-async.md §2).
 * An answer cut off (finish_reason length) before `</think>` is all reasoning.
 */
export function splitThinking(content: string): { thinking: string | undefined; report: string } {
  const match = /^\s*<think>([\s\S]*?)(?:<\/think>\s*|$)/.exec(content);
  if (!match) return { thinking: undefined, report: content };
  return { thinking: match[1]!.trim(), report: content.slice(match[0].length) };
}

function usageOf(usage: CompletionUsage): UsageReport {
  const report: UsageReport = { modelCalls: 1 };
  // Citation tokens are retrieved text the model read, billed at the input rate.
  if (usage.prompt_tokens != null || usage.citation_tokens != null)
    report.inputTokens = (usage.prompt_tokens ?? 0) + (usage.citation_tokens ?? 0);
  if (usage.completion_tokens != null) report.outputTokens = usage.completion_tokens;
  if (usage.reasoning_tokens != null) report.internalReasoningTokens = usage.reasoning_tokens;
  if (usage.num_search_queries != null) report.searches = usage.num_search_queries;
  if (usage.cost?.total_cost != null) report.providerCostUSD = usage.cost.total_cost;
  return report;
}

/**
 * `citations[]` in order (marker `[n]` is `citations[n-1]`, so its first marker places it),
 * enriched by `search_results[]`, then search results that were not cited.
 */
function citationsOf(report: string, response: CompletionResponse): Citation[] {
  const results = new Map<string, SearchResult>();
  for (const raw of response.search_results ?? []) {
    const parsed = SearchResult.safeParse(raw);
    if (parsed.success) results.set(normalizeUrl(parsed.data.url), parsed.data);
  }
  const out: Citation[] = [];
  const seen = new Set<string>();
  const add = (url: string, marker?: string) => {
    const key = normalizeUrl(url);
    if (seen.has(key)) return;
    seen.add(key);
    const citation: Citation = { url };
    const meta = results.get(key);
    if (meta?.title) citation.title = meta.title;
    if (meta?.snippet) citation.snippet = meta.snippet;
    const at = marker ? report.indexOf(marker) : -1;
    if (marker && at >= 0) {
      citation.startIndex = at;
      citation.endIndex = at + marker.length;
    }
    out.push(citation);
  };
  for (const [i, url] of (response.citations ?? []).entries()) add(url, `[${i + 1}]`);
  for (const result of results.values()) add(result.url);
  return out;
}

function searchesOf(steps: unknown[]): MappedEvent[] {
  const events: MappedEvent[] = [];
  for (const raw of steps) {
    const step = ReasoningStep.safeParse(raw);
    if (!step.success) continue;
    for (const query of step.data.web_search?.search_keywords ?? [])
      events.push({ type: "search", action: "search", query, state: "completed" });
    for (const content of step.data.fetch_url_content?.contents ?? []) {
      const page = SearchResult.safeParse(content);
      if (page.success)
        events.push({ type: "search", action: "open_page", url: page.data.url, state: "completed" });
    }
  }
  return events;
}

export interface MapperOptions {
  /** Catalog id, for `created`. */
  model: string;
  /** Only a session that submitted the job announces it; an attached one already has it. */
  emitCreated: boolean;
  includeThinking: boolean;
  logger: Logger;
}

/** The terminal batch of a COMPLETED or FAILED job. */
export function finalEvents(job: AsyncJob, options: Pick<MapperOptions, "includeThinking">): MappedEvent[] {
  if (job.status === "FAILED") {
    return [
      {
        type: "error",
        error: {
          code: "job_failed",
          message: `perplexity: the job failed (${job.error_message ?? "no reason given"}).`,
          retryable: false,
        },
      },
      { type: "status", status: "failed" },
    ];
  }
  const parsed = CompletionResponse.safeParse(job.response);
  const response = parsed.success ? parsed.data : undefined;
  const choice = response?.choices?.[0];
  const content = choice?.message?.content;
  if (!response || typeof content !== "string") {
    return [
      {
        type: "error",
        error: {
          code: "empty_response",
          message: "perplexity: the job completed without a readable response. Its charge may still apply.",
          retryable: false,
        },
      },
      { type: "status", status: "failed" },
    ];
  }
  const events: MappedEvent[] = [...searchesOf(choice?.message?.reasoning_steps ?? [])];
  const { thinking, report } = splitThinking(content);
  if (thinking && options.includeThinking) events.push({ type: "thinking", delta: thinking });
  if (report) events.push({ type: "text", delta: report });
  for (const citation of citationsOf(report, response)) events.push({ type: "citation", citation });
  if (response.usage) events.push({ type: "usage", usage: usageOf(response.usage) });
  if (choice?.finish_reason === "length") {
    events.push(
      {
        type: "gap",
        gap: {
          kind: "budget-exhausted",
          detail:
            "The model stopped at its output token limit (finish_reason length); the report is cut short.",
        },
      },
      { type: "status", status: "incomplete" },
    );
  } else {
    events.push({ type: "status", status: "completed" });
  }
  return events;
}

export class JobMapper {
  readonly #options: MapperOptions;
  #created = false;

  constructor(options: MapperOptions) {
    this.#options = options;
  }

  map(wire: WireEvent): MappedEvent[] {
    const parsed = AsyncJob.safeParse(wire.data);
    if (!parsed.success) {
      this.#options.logger.debug("perplexity: ignoring an unrecognized job snapshot", {
        issue: parsed.error.message,
      });
      return [];
    }
    const job = parsed.data;
    if (wire.cursor === FINAL_CURSOR) return finalEvents(job, this.#options);
    const events: MappedEvent[] = [];
    if (this.#options.emitCreated && !this.#created) {
      this.#created = true;
      events.push({ type: "created", jobId: job.id, provider: "perplexity", model: this.#options.model });
    }
    const status = statusOf(job.status);
    if (status === undefined)
      this.#options.logger.debug("perplexity: unknown job status", { status: job.status });
    // A terminal snapshot arrives again as the final batch; here only progress counts.
    if (status !== "completed" && status !== "failed")
      events.push({ type: "status", status: status ?? "running" });
    return events;
  }
}
