/**
 * Gemini wire events → Sonde events. Stateful: it keeps each step's text in flat blocks
 * until the job ends (so byte-offset citations can be converted) and only a fingerprint of
 * the report (the report is the job's result, not kept twice), what was already emitted
 * (so a final snapshot after a drop emits only the rest), and the last status and phase (so replayed lifecycle
 * events without an `event_id` are not delivered twice).
 *
 * Every batch lists text first, then citations, then the rest: `resumeState()` relies on
 * it to tell, from a ref's `cursorOffset`, how much of the last batch was delivered.
 */

import { CountedText } from "../../src/counted-text.js";
import type { Citation, Gap, JobStatus, ResearchPhase } from "../../src/events.js";
import type { Logger, MappedEvent, UsageReport, WireEvent } from "../../src/provider.js";
import { TextFingerprint } from "../../src/text-fingerprint.js";
import { LazyWire, PLAIN, STRING, stringValue, UINT, UNCOMPILED } from "../../src/transport/fast-json.js";
import { describeError } from "./errors.js";
import { citationKey, countActivity, readReport, stringList, toCitation, toUsageReport } from "./report.js";
import { resultEvents, toolNames, trailOf } from "./trail.js";
import {
  isTerminalStatus,
  normalizeLegacy,
  type WireAnnotation,
  type WireDelta,
  type WireError,
  WireEvent as WireEventSchema,
  WireInteraction,
  type WireStep,
  type WireUsage,
} from "./wire.js";

/** Wire events the session makes itself from GETs (never on the wire). */
export type LocalEvent =
  /** A non-terminal poll of the interaction; `data` is the Interaction. */
  | { kind: "poll" }
  /**
   * Before a final snapshot, on an attached job that never replayed up to its ref: the
   * text and citations delivered before the restart, so the core can aggregate them
   * without delivering them again. `data` is the final Interaction.
   */
  | { kind: "catch-up"; text: number; citations: number }
  /** The final Interaction (`data`), after a drop or in place of a refused stream. */
  | { kind: "snapshot"; error?: WireError | undefined };

/** A plain text delta read from its `data:` text by `matchStepText`, not JSON.parse. */
export interface StepText {
  index: number;
  text: string;
  eventId: string;
}

export type GeminiWire = WireEvent & {
  snapshot?: boolean;
  local?: LocalEvent;
  /** The cursor is Sonde's stand-in for a missing `event_id` (see session.ts). */
  standIn?: boolean;
  /** A text delta's fields, read by `matchStepText` (its `data` is built only if read). */
  event?: StepText;
};

/** A `step.delta` of plain text in the key order real streams send (WIRE.md; see src/transport/fast-json.ts). */
const STEP_TEXT = new RegExp(
  `^\\{"index":(${UINT}),"delta":\\{"text":"${STRING}","type":"text"\\},"event_id":"(${PLAIN})","event_type":"step\\.delta"\\}$`,
);

/** A plain text `step.delta` with an event id, read without JSON.parse; undefined for anything else. */
export function matchStepText(data: string): LazyWire<StepText> | undefined {
  const match = STEP_TEXT.exec(data);
  if (!match || match[4] === "") return undefined;
  const step = { index: Number(match[1]), text: stringValue(match[2], match[3]), eventId: match[4]! };
  return new LazyWire(step.eventId, match, stepPayload, step);
}

/** The payload of a `STEP_TEXT` match, as JSON.parse builds it. */
function stepPayload(_match: RegExpExecArray, step: StepText): Record<string, unknown> {
  return {
    index: step.index,
    delta: { text: step.text, type: "text" },
    event_id: step.eventId,
    event_type: "step.delta",
  };
}

interface StepState {
  type: string;
  /** `model_output`: its text so far (counting UTF-8 bytes), and where it starts in the report. */
  text: CountedText;
  base: number | undefined;
  /** Annotations that point past the text received so far. */
  pending: WireAnnotation[];
  callId?: string | undefined;
  queries: string[];
  urls: string[];
  began: boolean;
  ended: boolean;
}

/** Research phase a step type signals. */
const phaseOf: Record<string, ResearchPhase> = {
  google_search_call: "searching",
  url_context_call: "reading",
  file_search_call: "searching",
  code_execution_call: "reasoning",
  model_output: "writing",
};

class Batch {
  /** A stored Interaction's finished calls the stream did not deliver: before the report. */
  trail: MappedEvent[] = [];
  /** Result steps delivered before this batch (a stored Interaction's batch only). */
  trailFrom: number | undefined;
  text = "";
  citations: Citation[] = [];
  rest: MappedEvent[] = [];
  events(): MappedEvent[] {
    const out: MappedEvent[] = [...this.trail];
    if (this.text) out.push({ type: "text", delta: this.text });
    for (const citation of this.citations) out.push({ type: "citation", citation });
    out.push(...this.rest);
    return out;
  }
}

export interface MapperOptions {
  /** Catalog id, `gemini:<agent>`. */
  model: string;
  /** False when the request said `reasoning: { includeThinking: false }`. */
  includeThinking: boolean;
  logger: Logger;
  /** Attached: how many result steps (finished searches, pages, tool calls) were delivered. */
  resultsDelivered?: number;
}

/** What a batch held, for `resumeState()`: its cursor, then text, citations and trail events. */
export interface LastBatch {
  cursor: string | undefined;
  text: number;
  citations: number;
  /** Trail events listed first (a stored Interaction's batch), and the result steps delivered before them. */
  trail?: number;
  trailFrom?: number;
}

export class GeminiMapper {
  readonly #options: MapperOptions;
  /** The report's length and fingerprint. */
  #report = new TextFingerprint();
  #steps = new Map<number, StepState>();
  #cited = new Set<string>();
  #citations = 0;
  #jobId: string | undefined;
  #created = false;
  #status: JobStatus | undefined;
  #phase: ResearchPhase | undefined;
  #terminal = false;
  #searches = 0;
  #fetches = 0;
  #callQueries = new Map<string, string[]>();
  #productive = 0;
  #lastBatch: LastBatch | undefined;
  /** Result steps whose events were emitted, and their call ids. */
  #results = 0;
  #resultIds = new Set<string>();

  constructor(options: MapperOptions) {
    this.#options = options;
  }

  /** The interaction id, once an event named it. */
  get jobId(): string | undefined {
    return this.#jobId;
  }
  /** A terminal status was emitted. */
  get terminal(): boolean {
    return this.#terminal;
  }
  /** UTF-16 length of the report text emitted so far. */
  get textLength(): number {
    return this.#report.length;
  }
  get citationCount(): number {
    return this.#citations;
  }
  /** Wire events that produced at least one event: the session's measure of progress. */
  get productiveBatches(): number {
    return this.#productive;
  }
  /** Text length and citation count of the last non-empty batch, and its cursor. */
  get lastBatch(): LastBatch | undefined {
    // A copy: a text delta updates the mapper's own in place.
    return this.#lastBatch && { ...this.#lastBatch };
  }
  /** Result steps (finished searches, pages, tool calls) whose events were emitted. */
  get results(): number {
    return this.#results;
  }

  map(wire: GeminiWire): MappedEvent[] {
    const fast = wire.local ? undefined : this.#textDelta(wire);
    if (fast) return fast;
    const batch = new Batch();
    if (wire.local) this.#mapLocal(wire.local, wire.data, batch);
    else this.#mapEvent(wire.data, batch);
    const events = batch.events();
    if (events.length) this.#productive++;
    if (events.length)
      this.#lastBatch = {
        cursor: wire.cursor,
        text: batch.text.length,
        citations: batch.citations.length,
        ...(batch.trailFrom !== undefined && { trail: batch.trail.length, trailFrom: batch.trailFrom }),
      };
    return events;
  }

  /**
   * A plain text delta, nearly every event of a stream: checked by hand, not by the schema,
   * and mapped without a batch. Undefined for anything else (or text that completes a
   * waiting annotation): the general path maps it.
   */
  #textDelta(wire: GeminiWire): MappedEvent[] | undefined {
    let index: number;
    let text: string;
    if (wire.event) ({ index, text } = wire.event);
    else {
      const data = wire.data as {
        event_type?: unknown;
        index?: unknown;
        delta?: unknown;
        metadata?: unknown;
      } | null;
      if (data?.event_type !== "step.delta" || typeof data.index !== "number" || data.metadata != null)
        return;
      const delta = data.delta as { type?: unknown; text?: unknown } | null | undefined;
      if (delta?.type !== "text" || typeof delta.text !== "string") return;
      index = data.index;
      text = delta.text;
    }
    if (!text) return [];
    const state = this.#step(index, "model_output");
    if (state.pending.length) return;
    state.base ??= this.#report.length;
    state.text.append(text);
    this.#report.append(text);
    this.#productive++;
    const last = this.#lastBatch;
    if (last && last.trail === undefined) {
      last.cursor = wire.cursor;
      last.text = text.length;
      last.citations = 0;
    } else this.#lastBatch = { cursor: wire.cursor, text: text.length, citations: 0 };
    return [{ type: "text", delta: text }];
  }

  #mapEvent(data: unknown, batch: Batch): void {
    const parsed = WireEventSchema.safeParse(data, UNCOMPILED);
    if (!parsed.success) {
      this.#options.logger.debug("gemini: ignoring an event that is not an interaction event", {
        issues: parsed.error.issues.length,
      });
      return;
    }
    const event = normalizeLegacy(parsed.data);
    switch (event.event_type) {
      case "interaction.created": {
        this.#noteId(event.interaction?.id, batch);
        const status = event.interaction?.status;
        if (status && !isTerminalStatus(status)) this.#setStatus(status, batch);
        return;
      }
      case "interaction.status_update":
        this.#noteId(event.interaction_id, batch);
        // A terminal status waits for `interaction.completed` (it carries usage) or a snapshot.
        if (event.status && !isTerminalStatus(event.status)) this.#setStatus(event.status, batch);
        return;
      case "step.start":
        this.#stepStart(event.index ?? -1, event.step ?? {}, batch);
        return;
      case "step.delta":
        this.#stepDelta(event.index ?? -1, event.delta ?? {}, event.metadata?.total_usage, batch);
        return;
      case "step.stop":
        this.#stepStop(event.index ?? -1, event.usage, batch);
        return;
      case "interaction.completed": {
        const interaction = event.interaction ?? {};
        this.#noteId(interaction.id, batch);
        this.#flushAll(batch);
        this.#finish(
          interaction.status ?? "completed",
          interaction.usage,
          interaction.errors?.[0] ?? interaction.error,
          batch,
        );
        return;
      }
      case "error":
        this.#dropUnresolved();
        this.#finish("failed", undefined, event.error ?? {}, batch);
        return;
      default:
        this.#options.logger.debug("gemini: ignoring unknown event type", { eventType: event.event_type });
    }
  }

  #mapLocal(local: LocalEvent, data: unknown, batch: Batch): void {
    const interaction = WireInteraction.safeParse(data, UNCOMPILED).data ?? {};
    if (local.kind === "poll") {
      // A heartbeat per poll (ARCHITECTURE.md, "The flow of one job"): the job is alive while no stream is open.
      if (interaction.status && !isTerminalStatus(interaction.status))
        this.#setStatus(interaction.status, batch, true);
      return;
    }
    const stored = readReport(interaction);
    if (local.kind === "catch-up") {
      if (local.text > this.#report.length)
        this.#appendText(stored.report.slice(this.#report.length, local.text), batch);
      for (const citation of stored.citations.slice(0, local.citations)) this.#cite(citation, batch);
      return;
    }
    // The final snapshot: only what the stream did not already deliver, its trail first.
    const skip = Math.max(this.#results, this.#options.resultsDelivered ?? 0);
    const trail = trailOf(interaction.steps, skip, this.#resultIds);
    batch.trail = trail.events;
    batch.trailFrom = skip;
    this.#results = Math.max(skip, trail.results);
    if (this.#report.isPrefixOf(stored.report)) {
      this.#appendText(stored.report.slice(this.#report.length), batch);
    } else {
      this.#options.logger.warn("gemini: the stored report differs from the streamed text", {
        streamed: this.#report.length,
        stored: stored.report.length,
      });
      this.#gap(
        {
          kind: "interrupted",
          detail:
            "The report Gemini stored differs from the text streamed before the connection dropped; the streamed text was kept and the rest of the stored report appended.",
        },
        batch,
      );
      if (stored.report.length > this.#report.length)
        this.#appendText(stored.report.slice(this.#report.length), batch);
    }
    // The stored citations are authoritative: annotations still waiting for their text are replaced.
    this.#dropUnresolved();
    for (const citation of stored.citations) this.#cite(citation, batch);
    const counted = countActivity(interaction.steps);
    this.#searches = Math.max(this.#searches, counted.searches);
    this.#fetches = Math.max(this.#fetches, counted.fetches);
    this.#finish(
      interaction.status ?? "completed",
      interaction.usage,
      local.error ?? interaction.errors?.[0] ?? interaction.error,
      batch,
    );
  }

  #noteId(id: string | null | undefined, batch: Batch): void {
    if (!id) return;
    this.#jobId ??= id;
    if (this.#created) return;
    this.#created = true;
    batch.rest.push({ type: "created", jobId: id, provider: "gemini", model: this.#options.model });
  }

  #setStatus(wireStatus: string, batch: Batch, heartbeat = false): void {
    const status: JobStatus = wireStatus === "queued" ? "queued" : "running";
    if (status === this.#status && !heartbeat) return;
    this.#status = status;
    batch.rest.push({ type: "status", status });
  }

  #setPhase(phase: ResearchPhase | undefined, batch: Batch): void {
    if (!phase || phase === this.#phase) return;
    this.#phase = phase;
    batch.rest.push({ type: "phase", phase });
  }

  #gap(gap: Gap, batch: Batch): void {
    batch.rest.push({ type: "gap", gap });
  }

  #step(index: number, type: string | null | undefined): StepState {
    let state = this.#steps.get(index);
    if (!state) {
      state = {
        type: type ?? "unknown",
        text: new CountedText("bytes"),
        base: undefined,
        pending: [],
        queries: [],
        urls: [],
        began: false,
        ended: false,
      };
      this.#steps.set(index, state);
    } else if (state.type === "unknown" && type) {
      state.type = type;
    }
    return state;
  }

  #stepStart(index: number, step: WireStep, batch: Batch): void {
    if (this.#steps.has(index) && this.#steps.get(index)!.type !== "unknown") return; // replayed
    const type = step.type ?? "unknown";
    const state = this.#step(index, type);
    if (type === "thought") {
      this.#setPhase(this.#phase === undefined ? "planning" : "reasoning", batch);
      for (const part of step.summary ?? []) if (part.text) this.#think(part.text, batch);
      return;
    }
    this.#setPhase(phaseOf[type], batch);
    if (type === "model_output") {
      for (const content of step.content ?? []) {
        if (content.type === "text" && content.text) this.#stepText(state, content.text, batch);
        if (content.annotations?.length) this.#annotate(state, content.annotations, batch);
      }
      if (step.text) this.#stepText(state, step.text, batch);
      if (step.annotations?.length) this.#annotate(state, step.annotations, batch);
      return;
    }
    this.#toolData(state, step, batch);
  }

  #stepDelta(index: number, delta: WireDelta, usage: WireUsage | null | undefined, batch: Batch): void {
    const type = delta.type ?? "";
    switch (type) {
      case "text": {
        const state = this.#step(index, "model_output");
        if (delta.text) this.#stepText(state, delta.text, batch);
        break;
      }
      case "text_annotation_delta":
        this.#annotate(this.#step(index, "model_output"), delta.annotations ?? [], batch);
        break;
      case "thought_summary":
        this.#step(index, "thought");
        if (delta.content?.text) this.#think(delta.content.text, batch);
        break;
      case "thought_signature":
        break;
      default:
        if (/_(call|result)$/.test(type)) this.#toolData(this.#step(index, type), { ...delta, type }, batch);
        else
          this.#options.logger.debug("gemini: ignoring a step delta Sonde does not report", {
            deltaType: type,
          });
    }
    if (usage) this.#usage(usage, batch);
  }

  #stepStop(index: number, usage: WireUsage | null | undefined, batch: Batch): void {
    const state = this.#steps.get(index);
    if (state) {
      if (state.type === "model_output") this.#flush(state, batch, true);
      else this.#toolData(state, { type: state.type }, batch, true);
    }
    if (usage) this.#usage(usage, batch);
    else if (state?.type === "google_search_call" || state?.type === "url_context_call")
      // Searches are billed per query: keep the running cost current.
      this.#usage(undefined, batch);
  }

  #think(text: string, batch: Batch): void {
    // Gemini was asked not to summarize; drop any summary it sends anyway.
    if (this.#options.includeThinking) batch.rest.push({ type: "thinking", delta: text });
  }

  #appendText(text: string, batch: Batch): void {
    if (!text) return;
    this.#report.append(text);
    batch.text += text;
  }

  #stepText(state: StepState, text: string, batch: Batch): void {
    state.base ??= this.#report.length;
    state.text.append(text);
    this.#appendText(text, batch);
    if (state.pending.length) this.#flush(state, batch, false);
  }

  #annotate(state: StepState, annotations: WireAnnotation[], batch: Batch): void {
    state.pending.push(...annotations);
    this.#flush(state, batch, false);
  }

  /** Emits annotations whose span has fully arrived (all of them when `final`). */
  #flush(state: StepState, batch: Batch, final: boolean): void {
    if (!state.pending.length) return;
    const waiting: WireAnnotation[] = [];
    for (const annotation of state.pending) {
      const end = annotation.end_index ?? annotation.start_index ?? 0;
      if (!final && end > state.text.counted) {
        waiting.push(annotation);
        continue;
      }
      const base = state.base ?? this.#report.length;
      const toUtf16 = (bytes: number) => base + state.text.utf16Of(bytes);
      const citation = toCitation(annotation, toUtf16, toUtf16);
      if (citation) this.#cite(citation, batch);
      else
        this.#options.logger.debug("gemini: ignoring an annotation without a url", { type: annotation.type });
    }
    state.pending = waiting;
  }

  /** Annotations whose text never arrived (the job ended early, or a snapshot replaces them). */
  #dropUnresolved(): void {
    for (const state of this.#steps.values()) {
      if (state.pending.length)
        this.#options.logger.debug("gemini: dropping annotations whose text never arrived", {
          count: state.pending.length,
        });
      state.pending = [];
    }
  }

  #flushAll(batch: Batch): void {
    for (const state of this.#steps.values())
      if (state.type === "model_output") this.#flush(state, batch, true);
  }

  #cite(citation: Citation, batch: Batch): void {
    const key = citationKey(citation);
    if (this.#cited.has(key)) return;
    this.#cited.add(key);
    this.#citations++;
    batch.citations.push(citation);
  }

  /** Search, page and tool activity of a `*_call` / `*_result` step; each side once. */
  #toolData(state: StepState, data: WireStep | WireDelta, batch: Batch, stopping = false): void {
    const type = data.type ?? state.type;
    const isCall = type.endsWith("_call");
    const isResult = type.endsWith("_result");
    if (isCall) {
      if (data.id) state.callId = data.id;
      const queries = stringList(data.arguments?.queries);
      const urls = stringList(data.arguments?.urls);
      const hasInput =
        queries.length > 0 || urls.length > 0 || (data.arguments && Object.keys(data.arguments).length);
      if (state.began || (!hasInput && !stopping)) return;
      state.began = true;
      if (type === "google_search_call") {
        state.queries = queries;
        if (state.callId) this.#callQueries.set(state.callId, queries);
        this.#searches += queries.length;
        if (queries.length === 0) batch.rest.push({ type: "search", action: "search", state: "started" });
        for (const query of queries)
          batch.rest.push({ type: "search", action: "search", query, state: "started" });
      } else if (type === "url_context_call") {
        state.urls = urls;
        this.#fetches += urls.length;
        for (const url of urls)
          batch.rest.push({ type: "search", action: "open_page", url, state: "started" });
      } else {
        const name = toolNames[type.slice(0, -"_call".length)];
        if (!name) return;
        const input =
          type === "mcp_server_tool_call"
            ? {
                server: data.server_name ?? undefined,
                tool: data.name ?? undefined,
                arguments: data.arguments ?? undefined,
              }
            : (data.arguments ?? undefined);
        batch.rest.push({
          type: "tool",
          name,
          state: "started",
          ...(state.callId && { callId: state.callId }),
          input,
        });
      }
      return;
    }
    if (!isResult) return;
    const callId = (data as { call_id?: string | null }).call_id ?? state.callId;
    if (callId) state.callId = callId;
    const hasResult = (data as { result?: unknown }).result !== undefined;
    if (state.ended || (!hasResult && !stopping)) return;
    state.ended = true;
    const queries = (callId && this.#callQueries.get(callId)) || [];
    batch.rest.push(...resultEvents(type, data, callId, queries));
    this.#results++;
    if (callId) this.#resultIds.add(callId);
  }

  #usage(usage: WireUsage | null | undefined, batch: Batch): void {
    const report: UsageReport = toUsageReport(usage, { searches: this.#searches, fetches: this.#fetches });
    batch.rest.push({ type: "usage", usage: report });
  }

  /** The end of the job: usage, then (for a failure) the error, then the terminal status. */
  #finish(
    wireStatus: string,
    usage: WireUsage | null | undefined,
    error: WireError | null | undefined,
    batch: Batch,
  ): void {
    if (this.#terminal) return;
    this.#terminal = true;
    this.#usage(usage, batch);
    let status: JobStatus;
    switch (wireStatus) {
      case "completed":
        status = "completed";
        break;
      case "cancelled":
        status = "cancelled";
        break;
      case "incomplete":
        status = "incomplete";
        break;
      case "budget_exceeded":
        status = "incomplete";
        this.#gap(
          {
            kind: "budget-exhausted",
            detail:
              "Gemini stopped the research when the interaction's budget was exhausted (status budget_exceeded).",
          },
          batch,
        );
        break;
      case "requires_action":
        status = "incomplete";
        this.#gap(
          {
            kind: "interrupted",
            detail:
              "The agent stopped to wait for input (status requires_action), which an unattended job cannot give; continue it with previousJobId.",
          },
          batch,
        );
        break;
      default: {
        status = "failed";
        const described = describeError(error, "the interaction failed");
        batch.rest.push({ type: "error", error: { ...described, retryable: false } });
      }
    }
    this.#status = status;
    batch.rest.push({ type: "status", status });
    // Nothing is mapped after the end, and every annotation is resolved: the steps' text goes.
    this.#steps.clear();
  }
}
