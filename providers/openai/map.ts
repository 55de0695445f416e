/**
 * Maps OpenAI Responses wire events (SSE payloads and polled Response objects) onto
 * Sonde events. Stateful: it accumulates the report so citation offsets can be turned
 * into UTF-16 offsets of the whole report, and remembers what it already emitted so a
 * poll snapshot adds only what is new.
 */
import { type Citation, isTerminal, type JobStatus, type ResearchPhase } from "../../src/events.js";
import type { Logger, MappedEvent, UsageReport, WireEvent } from "../../src/provider.js";
import { TextBuffer } from "../../src/text-buffer.js";
import { codePointLength } from "../../src/text-offsets.js";
import {
  type WireAnnotation,
  WireAnnotation as WireAnnotationSchema,
  WireItem,
  WireResponse,
  WireStreamEvent,
  type WireUsage,
} from "./wire.js";

export interface MapperOptions {
  /** Catalog id (`openai:o4-mini-deep-research`), for `created`. */
  model: string;
  /** Emit reasoning summaries as `thinking`. */
  includeThinking: boolean;
  logger: Logger;
  /** Set when re-attaching: the job and its `created` event are already known. */
  jobId?: string;
}

/**
 * What was delivered before a ref was taken, re-sent under an earlier cursor so the core
 * suppresses it but still aggregates it (see session.ts, poll fallback after attach).
 */
export interface DeliveredPrefix {
  type: "sonde.delivered";
  text: string;
  citations: Citation[];
}

/** The report a finished Response holds: all `output_text` parts, concatenated in order. */
export interface FinalReport {
  text: string;
  citations: Citation[];
  searchIds: string[];
}

/** How many of a ref's events a mapper has emitted (text in UTF-16 units). */
export interface EmittedCounts {
  reportLength: number;
  citations: number;
}

/** The text length and citation count of the last wire event that mapped to events, and its cursor. */
export interface LastBatch {
  cursor: string | undefined;
  text: number;
  citations: number;
}

const statusOf: Record<string, JobStatus> = {
  queued: "queued",
  in_progress: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  incomplete: "incomplete",
};

const terminalOfEvent: Record<string, JobStatus> = {
  "response.completed": "completed",
  "response.failed": "failed",
  "response.incomplete": "incomplete",
  "response.cancelled": "cancelled",
};

/** Events that carry nothing Sonde reports beyond what neighbouring events already give. */
const quiet = new Set([
  "response.content_part.done",
  "response.reasoning_summary_part.added",
  "response.reasoning_summary_part.done",
  "response.reasoning_summary_text.done",
  "response.reasoning_text.delta",
  "response.reasoning_text.done",
  "response.refusal.delta",
  "response.web_search_call.in_progress",
  "response.web_search_call.searching",
  "response.web_search_call.completed",
  "response.file_search_call.in_progress",
  "response.file_search_call.searching",
  "response.file_search_call.completed",
  "response.code_interpreter_call.in_progress",
  "response.code_interpreter_call.interpreting",
  "response.code_interpreter_call.completed",
  "response.code_interpreter_call_code.delta",
  "response.code_interpreter_call_code.done",
  "response.mcp_call.in_progress",
  "response.mcp_call.completed",
  "response.mcp_call.failed",
  "response.mcp_call_arguments.delta",
  "response.mcp_call_arguments.done",
  "response.mcp_list_tools.in_progress",
  "response.mcp_list_tools.completed",
  "response.mcp_list_tools.failed",
]);

/**
 * One `output_text` content part: where it starts in the report, and how long it is. Its
 * text lives once, in the report buffer it appends to (parts follow each other in it).
 */
class TextPart {
  units = 0;
  codePoints = 0;
  readonly start: number;
  readonly #startCodePoints: number;
  readonly pending: WireAnnotation[] = [];
  constructor(readonly report: TextBuffer) {
    this.start = report.length;
    this.#startCodePoints = report.counted;
  }

  append(delta: string): void {
    this.report.append(delta);
    this.units += delta.length;
    this.codePoints += codePointLength(delta);
  }

  get text(): string {
    return this.report.slice(this.start, this.start + this.units);
  }

  /** `url_citation` indexes count code points of this part (as the server does); ours are UTF-16 of the report. */
  citation(annotation: WireAnnotation): Citation {
    const citation: Citation = { url: annotation.url ?? "" };
    if (annotation.title) citation.title = annotation.title;
    if (typeof annotation.start_index === "number" && typeof annotation.end_index === "number") {
      citation.startIndex = this.#utf16(annotation.start_index);
      citation.endIndex = this.#utf16(annotation.end_index);
    }
    return citation;
  }

  #utf16(codePoints: number): number {
    return this.report.utf16Of(this.#startCodePoints + Math.min(Math.max(0, codePoints), this.codePoints));
  }

  /** Whether the text the annotation points into has arrived. */
  covers(annotation: WireAnnotation): boolean {
    return (annotation.end_index ?? 0) <= this.codePoints;
  }
}

const isUrlCitation = (annotation: WireAnnotation) =>
  annotation.type === "url_citation" && typeof annotation.url === "string" && annotation.url.length > 0;

function parseItem(value: unknown): WireItem | undefined {
  const parsed = WireItem.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The report of a Response object, with citations in UTF-16 offsets of that report. */
export function reportOf(response: WireResponse): FinalReport {
  const text = new TextBuffer("codePoints");
  const citations: Citation[] = [];
  const searchIds: string[] = [];
  for (const [index, raw] of (response.output ?? []).entries()) {
    const item = parseItem(raw);
    if (!item) continue;
    if (item.type === "web_search_call") searchIds.push(item.id ?? `#${index}`);
    if (item.type !== "message") continue;
    for (const content of item.content ?? []) {
      if (content.type !== "output_text" || typeof content.text !== "string") continue;
      const part = new TextPart(text);
      part.append(content.text);
      for (const annotation of content.annotations ?? []) {
        if (isUrlCitation(annotation)) citations.push(part.citation(annotation));
      }
    }
  }
  return { text: text.toString(), citations, searchIds };
}

export function usageOf(usage: WireUsage | null | undefined, searches: number): UsageReport {
  const report: UsageReport = { searches };
  if (usage) {
    const reasoning = usage.output_tokens_details?.reasoning_tokens ?? 0;
    report.inputTokens = usage.input_tokens ?? 0;
    // Reasoning tokens are part of output_tokens on the wire; Sonde counts them apart.
    report.outputTokens = Math.max(0, (usage.output_tokens ?? 0) - reasoning);
    report.reasoningTokens = reasoning;
  }
  return report;
}

export function jobStatusOf(status: string | null | undefined): JobStatus {
  return (status && statusOf[status]) || "running";
}

function searchEvent(item: WireItem, state: "started" | "completed" | "failed"): MappedEvent {
  const action = item.action;
  const kind =
    action?.type === "open_page" ? "open_page" : action?.type?.startsWith("find") ? "find_in_page" : "search";
  const query = kind === "find_in_page" ? action?.pattern : (action?.query ?? action?.queries?.join("; "));
  return {
    type: "search",
    action: kind,
    state,
    ...(query && { query }),
    ...(action?.url && { url: action.url }),
  };
}

function parseArguments(value: string | null | undefined): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function toolEvent(item: WireItem, state: "started" | "completed" | "failed"): MappedEvent | undefined {
  const callId = item.id ?? undefined;
  const base = { type: "tool" as const, state, ...(callId && { callId }) };
  const done = state !== "started";
  switch (item.type) {
    case "file_search_call":
      return {
        ...base,
        name: "file_search",
        ...(item.queries?.length && { input: { queries: item.queries } }),
        ...(done && item.results != null && { output: item.results }),
      };
    case "code_interpreter_call":
      return {
        ...base,
        name: "code_interpreter",
        ...(item.code && { input: { code: item.code } }),
        ...(done && item.outputs != null && { output: item.outputs }),
      };
    case "mcp_call":
      return {
        ...base,
        name: "mcp",
        input: {
          server: item.server_label ?? undefined,
          tool: item.name ?? undefined,
          ...(item.arguments && { arguments: parseArguments(item.arguments) }),
        },
        ...(done && (item.output != null || item.error != null) && { output: item.output ?? item.error }),
      };
    case "mcp_list_tools": {
      const tools = Array.isArray(item.tools)
        ? item.tools.map((t) => (t as { name?: unknown })?.name).filter((n) => typeof n === "string")
        : [];
      return {
        ...base,
        name: "mcp",
        input: { server: item.server_label ?? undefined, operation: "list_tools" },
        ...(done && { output: item.error ?? { tools } }),
      };
    }
    default:
      return undefined;
  }
}

function itemState(item: WireItem): "completed" | "failed" {
  return item.status === "failed" || item.status === "incomplete" || item.error ? "failed" : "completed";
}

export class ResponseMapper {
  /** The response id, from the first event or snapshot that carried it. */
  jobId: string | undefined;
  readonly #options: MapperOptions;
  #created = false;
  #status: JobStatus | undefined;
  #phase: ResearchPhase | undefined;
  /** The report as streamed: the mapper's only copy of its text (the parts index into it). */
  #report = new TextBuffer("codePoints");
  #parts = new Map<string, TextPart>();
  #citations = 0;
  #searches = new Set<string>();
  #thinkingKey: string | undefined;
  #errorEmitted = false;
  #lastBatch: LastBatch | undefined;
  #lastPart: { itemId: unknown; index: unknown; part: TextPart } | undefined;

  constructor(options: MapperOptions) {
    this.#options = options;
    this.jobId = options.jobId;
  }

  /** A terminal status was emitted (nothing more is mapped after it). */
  get terminal(): boolean {
    return this.#status !== undefined && isTerminal(this.#status);
  }

  /** What this mapper has emitted so far. */
  get emitted(): EmittedCounts {
    return { reportLength: this.#report.length, citations: this.#citations };
  }

  /**
   * The last batch that mapped to events. A batch lists its text (one event at most) first,
   * then its citations (a final snapshot's `created` may precede them: it always ends the
   * job, so it is replayed whole): with a ref's `cursorOffset` this tells how much was delivered.
   */
  get lastBatch(): LastBatch | undefined {
    return this.#lastBatch;
  }

  map(wire: WireEvent): MappedEvent[] {
    const events = this.#map(wire);
    if (events.length > 0) {
      let text = 0;
      let citations = 0;
      for (const event of events) {
        if (event.type === "text") text += event.delta.length;
        if (event.type === "citation") citations++;
      }
      this.#lastBatch = { cursor: wire.cursor, text, citations };
    }
    return events;
  }

  #map(wire: WireEvent): MappedEvent[] {
    const data = wire.data as { type?: unknown; object?: unknown; id?: unknown } | null;
    if (data && data.type === "sonde.delivered") return this.#delivered(data as unknown as DeliveredPrefix);
    // A polled Response object (stream events all have a `type`; Responses have none).
    if (data && (data.object === "response" || (data.type === undefined && typeof data.id === "string"))) {
      const response = WireResponse.safeParse(data);
      if (response.success) return this.#snapshot(response.data);
      this.#options.logger.debug("openai: unreadable response snapshot ignored", {
        issues: response.error.message,
      });
      return [];
    }
    // Text deltas are nearly every event of a stream: checked by hand, not by the schema.
    const delta = data as {
      type?: unknown;
      delta?: unknown;
      item_id?: unknown;
      content_index?: unknown;
    } | null;
    if (
      delta?.type === "response.output_text.delta" &&
      typeof delta.delta === "string" &&
      (typeof delta.item_id === "string" || delta.item_id == null) &&
      (typeof delta.content_index === "number" || delta.content_index == null)
    )
      return this.#textDelta(delta as WireStreamEvent);
    const parsed = WireStreamEvent.safeParse(data);
    if (!parsed.success) {
      this.#options.logger.debug("openai: unreadable stream event ignored", { cursor: wire.cursor });
      return [];
    }
    return this.#event(parsed.data);
  }

  /**
   * The part of a finished response that was delivered before a ref was taken but that
   * this mapper (of an attached job) has not seen: to be replayed suppressed, so the
   * result is whole and nothing is delivered twice.
   */
  deliveredPrefix(response: WireResponse, delivered: EmittedCounts): DeliveredPrefix | undefined {
    const final = reportOf(response);
    const text = final.text.slice(this.#report.length, Math.max(this.#report.length, delivered.reportLength));
    const citations = final.citations.slice(this.#citations, Math.max(this.#citations, delivered.citations));
    if (!text && citations.length === 0) return undefined;
    return { type: "sonde.delivered", text, citations };
  }

  #delivered(prefix: DeliveredPrefix): MappedEvent[] {
    const out: MappedEvent[] = [];
    if (prefix.text) {
      this.#report.append(prefix.text);
      out.push({ type: "text", delta: prefix.text });
    }
    for (const citation of prefix.citations) out.push({ type: "citation", citation });
    this.#citations += prefix.citations.length;
    return out;
  }

  #createdEvents(response: WireResponse, heartbeat: boolean): MappedEvent[] {
    const out: MappedEvent[] = [];
    this.jobId ??= response.id;
    if (!this.#created) {
      this.#created = true;
      out.push({ type: "created", jobId: response.id, provider: "openai", model: this.#options.model });
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
      out.push({ type: "created", jobId: response.id, provider: "openai", model: this.#options.model });
    }
    return [...out, ...this.#terminal(response, terminal)];
  }

  #event(event: WireStreamEvent): MappedEvent[] {
    switch (event.type) {
      case "response.created":
      case "response.queued":
      case "response.in_progress": {
        const response = WireResponse.safeParse(event.response);
        return response.success ? this.#createdEvents(response.data, false) : [];
      }
      case "response.completed":
      case "response.failed":
      case "response.incomplete":
      case "response.cancelled": {
        const response = WireResponse.safeParse(event.response);
        const status = terminalOfEvent[event.type]!;
        if (!response.success) return this.#terminalWithout(status);
        return this.#terminal(response.data, status);
      }
      case "error":
        return this.#error(event);
      case "response.output_item.added":
        return this.#itemAdded(event);
      case "response.output_item.done":
        return this.#itemDone(event);
      case "response.content_part.added":
        this.#part(event);
        return [];
      case "response.output_text.delta":
        return this.#textDelta(event);
      case "response.output_text.annotation.added":
        return this.#annotation(event);
      case "response.output_text.done":
        return this.#textDone(event);
      case "response.reasoning_summary_text.delta":
        return this.#thinking(event);
      case "response.refusal.done":
        return event.refusal
          ? [
              {
                type: "gap",
                gap: { kind: "missing-evidence", detail: `The model refused: ${event.refusal}` },
              },
            ]
          : [];
      default:
        if (!quiet.has(event.type)) {
          this.#options.logger.debug("openai: unknown stream event ignored", { type: event.type });
        }
        return [];
    }
  }

  #setPhase(phase: ResearchPhase): MappedEvent[] {
    if (this.#phase === phase) return [];
    this.#phase = phase;
    return [{ type: "phase", phase }];
  }

  #itemAdded(event: WireStreamEvent): MappedEvent[] {
    const item = parseItem(event.item);
    if (!item) return [];
    switch (item.type) {
      case "reasoning":
        return this.#setPhase("reasoning");
      case "message":
        return this.#setPhase("writing");
      case "web_search_call":
        return [...this.#setPhase("searching"), searchEvent(item, "started")];
      case "file_search_call":
        return [...this.#setPhase("searching"), toolEvent(item, "started")!];
      default: {
        const tool = toolEvent(item, "started");
        if (tool) return [tool];
        this.#options.logger.debug("openai: output item ignored", { type: item.type });
        return [];
      }
    }
  }

  #itemDone(event: WireStreamEvent): MappedEvent[] {
    const item = parseItem(event.item);
    if (!item) return [];
    if (item.type === "web_search_call") {
      // Built-in searches are not in `usage`: count the items (open_page and find_in_page too).
      this.#searches.add(item.id ?? `#${event.output_index ?? this.#searches.size}`);
      // `.completed` may never come; the item's final copy ends the call.
      return [
        searchEvent(item, item.status === "failed" ? "failed" : "completed"),
        { type: "usage", usage: { searches: this.#searches.size } },
      ];
    }
    if (item.type === "message") {
      // Annotations still waiting for their text: the item is final, so is its text.
      return [...this.#parts.entries()]
        .filter(([key]) => key.startsWith(`${item.id}:`))
        .flatMap(([, part]) => this.#flush(part, true));
    }
    const tool = toolEvent(item, itemState(item));
    return tool ? [tool] : [];
  }

  #partOf(event: WireStreamEvent): TextPart {
    // Consecutive deltas go to the same part: skip building its key.
    const last = this.#lastPart;
    if (last && last.itemId === event.item_id && last.index === event.content_index) return last.part;
    const key = `${event.item_id}:${event.content_index ?? 0}`;
    let part = this.#parts.get(key);
    if (!part) {
      part = new TextPart(this.#report);
      this.#parts.set(key, part);
    }
    this.#lastPart = { itemId: event.item_id, index: event.content_index, part };
    return part;
  }

  #part(event: WireStreamEvent): void {
    const part = (event as { part?: { type?: unknown } }).part;
    if (part?.type === "output_text") this.#partOf(event);
  }

  #textDelta(event: WireStreamEvent): MappedEvent[] {
    if (typeof event.delta !== "string" || event.delta === "") return [];
    const part = this.#partOf(event);
    part.append(event.delta);
    const text: MappedEvent = { type: "text", delta: event.delta };
    if (part.pending.length === 0) return [text];
    // Annotations that were waiting for this text go out with it (after it: text first).
    return [text, ...this.#flush(part, false)];
  }

  #annotation(event: WireStreamEvent): MappedEvent[] {
    const parsed = WireAnnotationSchema.safeParse(event.annotation);
    if (!parsed.success || !isUrlCitation(parsed.data)) return [];
    const part = this.#partOf(event);
    part.pending.push(parsed.data);
    return this.#flush(part, false);
  }

  #textDone(event: WireStreamEvent): MappedEvent[] {
    const part = this.#partOf(event);
    const out: MappedEvent[] = [];
    // The final text is authoritative; deltas that never came are delivered here.
    if (typeof event.text === "string" && event.text.length > part.units) {
      if (event.text.startsWith(part.text)) {
        const rest = event.text.slice(part.units);
        part.append(rest);
        out.push({ type: "text", delta: rest });
      } else {
        this.#options.logger.warn("openai: output_text.done disagrees with the streamed text", {
          itemId: event.item_id,
        });
      }
    }
    return [...out, ...this.#flush(part, true)];
  }

  /** Emits waiting annotations in order, once the text they point into has arrived (or `force`). */
  #flush(part: TextPart, force: boolean): MappedEvent[] {
    const out: MappedEvent[] = [];
    while (part.pending.length > 0 && (force || part.covers(part.pending[0]!))) {
      out.push({ type: "citation", citation: part.citation(part.pending.shift()!) });
      this.#citations++;
    }
    return out;
  }

  #thinking(event: WireStreamEvent): MappedEvent[] {
    if (!this.#options.includeThinking || typeof event.delta !== "string" || !event.delta) return [];
    const key = `${event.item_id}:${event.summary_index ?? 0}`;
    // Summary parts arrive as separate paragraphs ("**Title**\n\n…"); keep them apart.
    const separator = this.#thinkingKey !== undefined && this.#thinkingKey !== key ? "\n\n" : "";
    this.#thinkingKey = key;
    return [{ type: "thinking", delta: separator + event.delta }];
  }

  #error(event: WireStreamEvent): MappedEvent[] {
    const code = event.error?.code ?? event.code ?? event.error?.type ?? "server_error";
    const message = event.error?.message ?? event.message ?? "OpenAI reported an error in the stream.";
    this.#errorEmitted = true;
    this.#status = "failed";
    // Nothing more comes for this response (a `response.failed` may follow; the core stops here).
    return [
      { type: "error", error: { code, message: `openai: ${message}`, retryable: false } },
      { type: "status", status: "failed" },
    ];
  }

  #terminalWithout(status: JobStatus): MappedEvent[] {
    this.#status = status;
    return [{ type: "status", status }];
  }

  /** A terminal Response: what was not emitted yet (text, citations), usage, why it stopped, status. */
  #terminal(response: WireResponse, fallback: JobStatus): MappedEvent[] {
    this.jobId ??= response.id;
    const out: MappedEvent[] = [];
    const final = reportOf(response);
    // Text first, then citations (see `lastBatch`).
    if (final.text.length > this.#report.length) {
      if (final.text.startsWith(this.#report.toString())) {
        const rest = final.text.slice(this.#report.length);
        this.#report.append(rest);
        out.push({ type: "text", delta: rest });
      } else {
        this.#options.logger.warn(
          "openai: the final report disagrees with the streamed text; kept the stream's",
        );
      }
    }
    for (const part of this.#parts.values()) out.push(...this.#flush(part, true));
    for (const citation of final.citations.slice(this.#citations)) out.push({ type: "citation", citation });
    this.#citations = Math.max(this.#citations, final.citations.length);
    for (const id of final.searchIds) this.#searches.add(id);
    if (response.usage || this.#searches.size > 0)
      out.push({ type: "usage", usage: usageOf(response.usage, this.#searches.size) });

    const status = statusOf[response.status ?? ""] ?? fallback;
    if (status === "failed" && !this.#errorEmitted) {
      const code = response.error?.code ?? "failed";
      const message = response.error?.message ?? "The response failed without a reason.";
      out.push({ type: "error", error: { code, message: `openai: ${message}`, retryable: false } });
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
