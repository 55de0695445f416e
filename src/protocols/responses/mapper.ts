/**
 * Maps Responses wire events (decoded stream events and polled Response objects) onto
 * Sonde events. Stateful: it accumulates the report so citation offsets can be turned
 * into UTF-16 offsets of the whole report, and remembers what it already emitted so a
 * poll snapshot adds only what is new. Provider differences come from the dialect.
 */
import { isTerminal, type JobStatus, type ResearchPhase } from "../../events.js";
import type { Logger, MappedEvent, WireEvent } from "../../provider.js";
import { UNCOMPILED } from "../../transport/fast-json.js";
import type { ResponsesDialect } from "./dialect.js";
import { decodeStreamEvent, type StreamEvent, type StreamEventOf } from "./events.js";
import type { ReasoningSummary } from "./reasoning-summary.js";
import type { ReasoningTrace } from "./reasoning-trace.js";
import { type DeliveredPrefix, type EmittedCounts, StreamedReport } from "./report.js";

import { jobStatusOf, statusOf, terminalOfEvent } from "./status.js";
import { reportOf, SourceIndex } from "./text.js";
import { searchItemKey, ToolCounts } from "./tool-counts.js";
import { itemState, searchEvent } from "./tool-events.js";
import { isTrailItem, LiveSearches, trailOf } from "./trail.js";
import { fetchedPagesOf, searchResultsOf, type WireItem, WireResponse } from "./wire.js";

export type { DeliveredPrefix, EmittedCounts };

export interface MapperOptions {
  dialect: ResponsesDialect;
  /** Catalog id (`openai:o4-mini-deep-research`), for `created`. */
  model: string;
  /** Emit reasoning (summaries, Perplexity's thoughts) as `thinking`. */
  includeThinking: boolean;
  logger: Logger;
  /** Set when re-attaching: the job and its `created` event are already known. */
  jobId?: string;
  /** Set when re-attaching: how many finished trail items (searches, tool calls) were delivered. */
  trailDelivered?: number;
}

/** A wire event whose payload the session already decoded (see session.ts). */
export type DecodedWireEvent = WireEvent & { event?: StreamEvent | undefined };

/** The text length and citation count of the last wire event that mapped to events, and its cursor. */
export interface LastBatch {
  cursor: string | undefined;
  text: number;
  citations: number;
  /** Completed or failed trail events; they come first in a batch. */
  trail: number;
}

/**
 * With `includeThinking: false`, reasoning Sonde hides is not kept in the raw payloads either:
 * Perplexity's `response.reasoning.*` events carry it as a top-level `thought`, so the events
 * they map to get the payload without it.
 */
function hideThought(data: unknown, events: MappedEvent[]): void {
  if (!data || typeof data !== "object" || typeof (data as { thought?: unknown }).thought !== "string")
    return;
  const { thought: _hidden, ...raw } = data as Record<string, unknown>;
  for (const event of events) event.rawEvent = raw;
}

/** Events that carry nothing Sonde reports beyond what neighbouring events already give. */
const quiet = new Set([
  "response.content_part.done",
  "response.reasoning_summary_part.added",
  "response.reasoning_summary_part.done",
  "response.reasoning_summary_text.done",
  "response.reasoning_text.delta",
  "response.reasoning_text.done",
  "response.refusal.delta",
  "response.skill.loaded",
]);
/** A tool call's progress (its output item says the same): OpenAI's searches, code interpreter and MCP calls. */
const toolProgress =
  /^response\.(?:web_search_call|file_search_call|code_interpreter_call(?:_code)?|mcp_call(?:_arguments)?|mcp_list_tools)\.(?:in_progress|searching|interpreting|completed|failed|delta|done)$/;

export class ResponseMapper {
  /** The response id, from the first event or snapshot that carried it. */
  jobId: string | undefined;
  readonly #options: MapperOptions;
  readonly #dialect: ResponsesDialect;
  readonly #sources = new SourceIndex();
  #created = false;
  #status: JobStatus | undefined;
  #phase: ResearchPhase | undefined;
  readonly #text: StreamedReport;
  readonly #counts = new ToolCounts();
  /** Pages the `fetch_url_results` items streamed so far list. */
  #fetchedItems = 0;
  readonly #trace: ReasoningTrace | undefined;
  /** Ids of trail items whose completion was emitted, and how many there were. */
  #trailDone = new Set<string>();
  /** Perplexity's searches completed live (by what they say: they have no item ids). */
  readonly #liveSearches = new LiveSearches();
  #trail = 0;
  readonly #summary: ReasoningSummary | undefined;
  #errorEmitted = false;
  #lastBatch: LastBatch | undefined;

  constructor(options: MapperOptions) {
    this.#options = options;
    this.#dialect = options.dialect;
    this.#text = new StreamedReport({
      inline: options.dialect.inlineCitations?.(),
      annotations: options.dialect.annotations,
      sources: this.#sources,
      logger: options.logger,
      provider: options.dialect.provider,
    });
    const Summary = options.dialect.reasoningSummary;
    this.#summary = Summary && new Summary();
    const Trace = options.dialect.reasoningTrace;
    this.#trace =
      Trace &&
      new Trace({
        includeThinking: options.includeThinking,
        counts: this.#counts,
        sources: this.#sources,
        phase: (phase) => this.#setPhase(phase),
      });
    this.jobId = options.jobId;
  }

  /** A terminal status was emitted (nothing more is mapped after it). */
  get terminal(): boolean {
    return this.#status !== undefined && isTerminal(this.#status);
  }

  /** What this mapper has emitted so far. */
  get emitted(): EmittedCounts {
    return { ...this.#text.emitted, trail: this.#trail };
  }

  /**
   * The last batch that mapped to events. A batch lists its text (one event at most) first,
   * then its citations (a final snapshot's `created` may precede them: it always ends the
   * job, so it is replayed whole): with a ref's `cursorOffset` this tells how much was delivered.
   */
  get lastBatch(): LastBatch | undefined {
    // A copy: the mapper updates its own in place.
    return this.#lastBatch && { ...this.#lastBatch };
  }

  map(wire: DecodedWireEvent): MappedEvent[] {
    const event = wire.event;
    // Nearly every event: a text delta, mapped here rather than through the general switch, so
    // that this short path is what V8 counts and optimizes early in a run (it optimizes a
    // function by its own bytecode run, and a delta runs a small part of `#event`'s).
    const events = event?.type === "response.output_text.delta" ? this.#text.delta(event) : this.#map(wire);
    if (!this.#options.includeThinking && events.length > 0) hideThought(wire.data, events);
    if (events.length === 0) return events;
    // The batch's figures are updated in place.
    this.#lastBatch ??= { cursor: undefined, text: 0, citations: 0, trail: 0 };
    const last = this.#lastBatch;
    last.cursor = wire.cursor;
    last.text = last.citations = last.trail = 0;
    if (events.length === 1 && events[0]!.type === "text") {
      // The hot path (a text delta).
      last.text = events[0]!.delta.length;
      return events;
    }
    for (const event of events) {
      if (event.type === "text") last.text += event.delta.length;
      if (event.type === "citation") last.citations++;
      if ((event.type === "search" || event.type === "tool") && event.state !== "started") last.trail++;
    }
    return events;
  }

  #map(wire: DecodedWireEvent): MappedEvent[] {
    if (wire.event) return this.#event(wire.event);
    const data = wire.data as { type?: unknown; object?: unknown; id?: unknown } | null;
    if (data && data.type === "sonde.delivered")
      return this.#text.delivered(data as unknown as DeliveredPrefix);
    // A polled Response object (stream events all have a `type`; Responses have none).
    if (data && (data.object === "response" || (data.type === undefined && typeof data.id === "string"))) {
      const response = WireResponse.safeParse(data, UNCOMPILED);
      if (response.success) return this.#snapshot(response.data);
      this.#options.logger.debug(`${this.#dialect.provider}: unreadable response snapshot ignored`, {
        issues: response.error.message,
      });
      return [];
    }
    const event = decodeStreamEvent(data);
    if (!event) {
      this.#options.logger.debug(`${this.#dialect.provider}: unreadable stream event ignored`, {
        cursor: wire.cursor,
      });
      return [];
    }
    return this.#event(event);
  }

  /**
   * The part of a finished response that was delivered before a ref was taken but that
   * this mapper (of an attached job) has not seen: to be replayed suppressed, so the
   * result is whole and nothing is delivered twice.
   */
  deliveredPrefix(response: WireResponse, delivered: EmittedCounts): DeliveredPrefix | undefined {
    return this.#text.prefixOf(reportOf(response, this.#dialect), delivered);
  }

  #createdEvent(id: string): MappedEvent {
    return { type: "created", jobId: id, provider: this.#dialect.provider, model: this.#options.model };
  }

  #createdEvents(response: WireResponse, heartbeat: boolean): MappedEvent[] {
    const out: MappedEvent[] = [];
    this.jobId ??= response.id;
    if (!this.#created) {
      this.#created = true;
      out.push(this.#createdEvent(response.id));
    }
    const status = jobStatusOf(response.status);
    // Polls repeat the status on purpose: each one is a heartbeat.
    if (heartbeat || status !== this.#status) out.push({ type: "status", status });
    this.#status = status;
    return out;
  }

  /** A polled Response object: a heartbeat, or (terminal) everything not emitted yet. */
  #snapshot(response: WireResponse): MappedEvent[] {
    const terminal = statusOf[response.status ?? ""];
    if (!terminal || terminal === "queued" || terminal === "running")
      return this.#createdEvents(response, true);
    // A final snapshot maps to the same events in a started and in an attached job (a
    // ref's offset into it must mean the same): `created` only when nothing came before.
    const out: MappedEvent[] = [];
    if (!this.#created && this.#options.jobId === undefined) {
      this.#created = true;
      this.jobId ??= response.id;
      out.push(this.#createdEvent(response.id));
    }
    return [...out, ...this.#terminal(response, terminal)];
  }

  #event(event: StreamEvent): MappedEvent[] {
    switch (event.type) {
      case "response.output_text.delta":
        return this.#text.delta(event);
      case "response.reasoning_summary_text.delta":
        return this.#options.includeThinking && this.#summary ? this.#summary.map(event) : [];
      case "response.created":
      case "response.queued":
      case "response.in_progress":
        return event.response ? this.#createdEvents(event.response, false) : [];
      case "response.completed":
      case "response.failed":
      case "response.incomplete":
      case "response.cancelled":
        return this.#terminalEvent(event);
      case "error":
        return this.#error(event);
      case "response.output_item.added":
        return event.item ? this.#itemAdded(event.item) : [];
      case "response.output_item.done":
        return event.item ? this.#itemDone(event.item, event.output_index) : [];
      case "response.content_part.added":
        if (event.part?.type === "output_text") this.#text.partAdded(event);
        return [];
      case "response.output_text.annotation.added":
        return this.#text.annotation(event);
      case "response.output_text.done":
        return this.#text.textDone(event);
      case "response.refusal.done":
        return event.refusal
          ? [
              {
                type: "gap",
                gap: { kind: "missing-evidence", detail: `The model refused: ${event.refusal}` },
              },
            ]
          : [];
      case "response.reasoning.started":
      case "response.reasoning.stopped":
      case "response.reasoning.search_queries":
      case "response.reasoning.search_results":
      case "response.reasoning.fetch_url_queries":
      case "response.reasoning.fetch_url_results":
        return this.#trace ? this.#traced(this.#trace.map(event)) : [];
      case "unknown":
        if (!quiet.has(event.wireType) && !toolProgress.test(event.wireType)) {
          this.#options.logger.debug(`${this.#dialect.provider}: unknown stream event ignored`, {
            type: event.wireType,
          });
        }
        return [];
    }
  }

  /** The trace's completed searches are trail delivered live: a finished body's trail leaves them out. */
  #traced(events: MappedEvent[]): MappedEvent[] {
    for (const event of events) {
      if (event.type !== "search" || event.state === "started") continue;
      this.#liveSearches.add(event);
      this.#trail++;
    }
    return events;
  }

  #setPhase(phase: ResearchPhase): MappedEvent[] {
    if (this.#phase === phase) return [];
    this.#phase = phase;
    return [{ type: "phase", phase }];
  }

  #itemAdded(item: WireItem): MappedEvent[] {
    switch (item.type) {
      case "reasoning":
        return this.#setPhase("reasoning");
      case "message":
        return this.#setPhase("writing");
      case "web_search_call":
        return [...this.#setPhase("searching"), searchEvent(item, "started")];
      case "file_search_call": {
        const tool = this.#dialect.toolEvent?.(item, "started");
        return [...this.#setPhase("searching"), ...(tool ? [tool] : [])];
      }
      case "search_results":
      case "fetch_url_results":
        return [];
      default: {
        const tool = this.#dialect.toolEvent?.(item, "started");
        if (tool) return [tool];
        this.#options.logger.debug(`${this.#dialect.provider}: output item ignored`, { type: item.type });
        return [];
      }
    }
  }

  #itemDone(item: WireItem, outputIndex: number | null | undefined): MappedEvent[] {
    if (isTrailItem(item)) {
      this.#trail++;
      if (item.id) this.#trailDone.add(item.id);
    }
    if (item.type === "web_search_call") {
      // Built-in searches are not in `usage`: count the items (open_page and find_in_page too).
      this.#counts.addSearch(item.id ?? `#${outputIndex ?? this.#counts.searchItems}`);
      // `.completed` may never come; the item's final copy ends the call.
      return [
        searchEvent(item, item.status === "failed" ? "failed" : "completed"),
        { type: "usage", usage: { searches: this.#counts.searchItems } },
      ];
    }
    if (item.type === "search_results") {
      this.#counts.addSearch(searchItemKey(outputIndex));
      this.#sources.add(searchResultsOf(item.results));
      return [this.#counts.usageEvent()];
    }
    if (item.type === "fetch_url_results") {
      this.#fetchedItems += fetchedPagesOf(item.contents).length;
      this.#counts.pagesListed(this.#fetchedItems);
      return [this.#counts.usageEvent()];
    }
    if (item.type === "message") {
      return this.#text.messageDone(item.id);
    }
    const tool = this.#dialect.toolEvent?.(item, itemState(item));
    return tool ? [tool] : [];
  }

  #error(event: StreamEventOf<"error">): MappedEvent[] {
    const code = event.error?.code ?? event.code ?? event.error?.type ?? "server_error";
    const message =
      event.error?.message ?? event.message ?? `${this.#dialect.label} reported an error in the stream.`;
    return this.#failure(code, message);
  }

  /** Nothing more comes for this response (a `response.failed` may follow; the core stops here). */
  #failure(code: string, message: string): MappedEvent[] {
    this.#errorEmitted = true;
    this.#status = "failed";
    return [
      { type: "error", error: { code, message: `${this.#dialect.provider}: ${message}`, retryable: false } },
      { type: "status", status: "failed" },
    ];
  }

  #terminalEvent(
    event: StreamEventOf<
      "response.completed" | "response.failed" | "response.incomplete" | "response.cancelled"
    >,
  ): MappedEvent[] {
    const status = terminalOfEvent[event.type]!;
    if (event.response) return this.#terminal(event.response, status, event.error ?? undefined);
    if (status === "failed") {
      const message = event.error?.message ?? "The response failed without a reason.";
      return this.#failure(event.error?.code ?? event.error?.type ?? "failed", message);
    }
    this.#status = status;
    return [{ type: "status", status }];
  }

  /** A terminal Response: what was not emitted yet (text, citations), usage, why it stopped, status. */
  #terminal(
    response: WireResponse,
    fallback: JobStatus,
    eventError?: { code?: string | null; message?: string | null; type?: string | null },
  ): MappedEvent[] {
    this.jobId ??= response.id;
    const final = reportOf(response, this.#dialect);
    for (const id of final.searchIds) this.#counts.addSearch(id);
    this.#counts.pagesListed(final.fetches);
    this.#sources.addAll(final.sources);
    // The trail a live stream did not deliver (all of it when polled), before the report.
    const trail = trailOf(response.output, this.#options.trailDelivered ?? 0, this.#trailDone, {
      dialect: this.#dialect,
      live: this.#liveSearches,
    });
    this.#trail = Math.max(this.#trail, trail.items);
    const out = [...trail.events, ...this.#text.final(final)];
    const counted = this.#counts.counted;
    if (response.usage || counted.searches > 0 || counted.fetches > 0)
      out.push({ type: "usage", usage: this.#dialect.usage(response.usage, counted) });

    const status = statusOf[response.status ?? ""] ?? fallback;
    if (status === "failed" && !this.#errorEmitted) {
      const error = response.error ?? eventError;
      const code = error?.code ?? error?.type ?? "failed";
      const message = error?.message ?? "The response failed without a reason.";
      out.push({
        type: "error",
        error: { code, message: `${this.#dialect.provider}: ${message}`, retryable: false },
      });
    }
    if (status === "incomplete") {
      const reason = response.incomplete_details?.reason ?? "unknown";
      out.push({
        type: "gap",
        gap: {
          kind: reason === "max_output_tokens" ? "budget-exhausted" : "interrupted",
          detail: `The response stopped before it finished (${reason}); the report may be cut short.`,
        },
      });
    }
    this.#status = status;
    out.push({ type: "status", status });
    return out;
  }
}
