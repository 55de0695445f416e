/**
 * OpenRouter chunks → research events. Stateful but flat: reasoning text passes
 * straight through as `thinking` deltas and is never kept; only the report text
 * (which citation offsets index into) and the set of cited URLs are remembered.
 */
import type { JobStatus } from "../../src/events.js";
import type { Logger, MappedEvent, UsageReport, WireEvent } from "../../src/provider.js";
import { CitationTracker } from "./citations.js";
import { ReceivedTally } from "./estimate.js";
import { ThinkSplitter } from "./think.js";
import { Annotation, Chunk, type ChunkUsage, ReasoningDetail } from "./wire.js";

/** What `connect` yields for the `data: [DONE]` line: the end of a complete stream. */
export const DONE = "[DONE]";

/** What `connect` yields when the stream was lost before its end: time to estimate the cost. */
export const INTERRUPTED = "[INTERRUPTED]";

/** Mid-stream `error_type`s a fresh request may get past (openrouter-chat.md §6). */
const transientErrors = new Set([
  "rate_limit_exceeded",
  "provider_overloaded",
  "provider_unavailable",
  "timeout",
]);

/**
 * A chunk without its reasoning (`reasoning`, `reasoning_details`, and inline thinking in
 * `content`, replaced by `visibleContent`); the same object when it had none.
 */
export function withoutReasoning(data: unknown, visibleContent?: string): unknown {
  const choices = (data as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return data;
  let changed = false;
  const stripped = choices.map((choice: unknown) => {
    const delta = (choice as { delta?: unknown } | null)?.delta;
    if (!delta || typeof delta !== "object") return choice;
    const { reasoning, reasoning_details, ...rest } = delta as Record<string, unknown>;
    if (reasoning == null && reasoning_details == null && visibleContent === undefined) return choice;
    changed = true;
    return {
      ...(choice as object),
      delta: { ...rest, ...(visibleContent !== undefined && { content: visibleContent }) },
    };
  });
  return changed ? { ...(data as object), choices: stripped } : data;
}

export interface MapperOptions {
  /** Catalog id, for `created`. */
  model: string;
  /** The generation id from the `X-Generation-Id` header, if the first chunk lacks one. */
  fallbackId: () => string | undefined;
  /** Price reasoning as Perplexity's internal reasoning (the catalog prices it separately). */
  internalReasoning: boolean;
  /** `reasoning.includeThinking: false`: reasoning is hidden upstream, and whatever still arrives is dropped. */
  includeThinking: boolean;
  /** Characters of the prompt sent, for the cost estimate after a drop. */
  promptChars: number;
  logger: Logger;
}

/**
 * The text of a chunk that carries nothing but content (nearly every chunk of a stream),
 * checked by hand instead of by the schema; undefined for any other chunk.
 */
function plainContent(data: unknown): string | undefined {
  const chunk = data as {
    choices?: unknown;
    usage?: unknown;
    error?: unknown;
    citations?: unknown;
  } | null;
  if (!chunk || chunk.usage != null || chunk.error != null || chunk.citations != null) return undefined;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as { delta?: Record<string, unknown> | null; finish_reason?: unknown } | null;
  const delta = choice?.delta;
  if (choice?.finish_reason != null || !delta || typeof delta.content !== "string") return undefined;
  if (delta.reasoning != null || delta.reasoning_details != null || delta.annotations != null)
    return undefined;
  return delta.content;
}

export class ChunkMapper {
  readonly #options: MapperOptions;
  readonly #think = new ThinkSplitter();
  readonly #citations = new CitationTracker();
  readonly #tally: ReceivedTally;
  #jobId: string | undefined;
  #finish: string | undefined;
  #usageSeen = false;
  #terminal = false;
  /** The report part of this chunk's content, when the content also held inline thinking. */
  #visible: string | undefined;

  constructor(options: MapperOptions) {
    this.#options = options;
    this.#tally = new ReceivedTally(options.promptChars);
  }

  get jobId(): string | undefined {
    return this.#jobId;
  }

  map(wire: WireEvent): MappedEvent[] {
    this.#visible = undefined;
    const events = this.#map(wire);
    if (!this.#options.includeThinking && events.length) {
      // Hidden reasoning is not kept even inside the raw payloads the events carry.
      const raw = withoutReasoning(wire.data, this.#visible);
      if (raw !== wire.data) for (const event of events) event.rawEvent = raw;
    }
    return events;
  }

  #map(wire: WireEvent): MappedEvent[] {
    if (this.#terminal) return [];
    const events: MappedEvent[] = [];
    if (wire.data === DONE) {
      this.#flush(events);
      this.#end(events);
      return events;
    }
    if (wire.data === INTERRUPTED) {
      this.#flush(events);
      // The run goes on billing upstream; without the final usage chunk, estimate what it cost so far.
      if (!this.#usageSeen)
        events.push({ type: "usage", usage: this.#tally.usage(this.#options.internalReasoning) });
      // Sonde's own marker, not a provider payload: these events carry none.
      for (const event of events) event.rawEvent = null;
      return events;
    }
    if (this.#jobId !== undefined) {
      const content = plainContent(wire.data);
      if (content !== undefined) {
        if (content) {
          const split = this.#think.push(content);
          if (split.thinking) this.#visible = split.text;
          this.#content(split, events);
        }
        return events;
      }
    }
    const parsed = Chunk.safeParse(wire.data);
    if (!parsed.success) {
      this.#options.logger.debug("openrouter: ignoring an unrecognized chunk", {
        issue: parsed.error.message,
      });
      return events;
    }
    const chunk = parsed.data;
    if (this.#jobId === undefined) {
      this.#jobId = chunk.id ?? this.#options.fallbackId() ?? `openrouter-${globalThis.crypto.randomUUID()}`;
      events.push(
        { type: "created", jobId: this.#jobId, provider: "openrouter", model: this.#options.model },
        { type: "status", status: "running" },
      );
    }
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    if (delta) {
      this.#reasoning(delta.reasoning_details, delta.reasoning, events);
      if (delta.content) {
        const split = this.#think.push(delta.content);
        if (split.thinking) this.#visible = split.text;
        this.#content(split, events);
      }
      for (const raw of delta.annotations ?? []) {
        const annotation = Annotation.safeParse(raw);
        if (!annotation.success || annotation.data.type !== "url_citation" || !annotation.data.url_citation)
          continue;
        const citation = this.#citations.annotation(annotation.data.url_citation);
        if (citation) events.push({ type: "citation", citation });
      }
    }
    for (const citation of chunk.citations ? this.#citations.list(chunk.citations) : [])
      events.push({ type: "citation", citation });
    // Markers in this chunk's text (or earlier) may number sources that only arrived with it.
    for (const citation of this.#citations.placeEarlierMarkers()) events.push({ type: "citation", citation });
    if (chunk.usage) {
      this.#usageSeen = true;
      events.push({ type: "usage", usage: this.#usage(chunk.usage) });
    }
    if (chunk.error) {
      this.#flush(events);
      const { code, message, metadata } = chunk.error;
      const type = metadata?.error_type ?? undefined;
      events.push({
        type: "error",
        error: {
          code: type ?? (code !== undefined && code !== null ? String(code) : "provider_error"),
          message:
            `openrouter: ${message ?? "the provider reported an error"} (mid-stream). ` +
            "What arrived before it is kept; a retry restarts the whole request and is billed again.",
          retryable: type !== undefined && transientErrors.has(type),
          ...(typeof code === "number" && { status: code }),
        },
      });
      this.#terminate("failed", events);
      return events;
    }
    if (choice?.finish_reason) this.#finish = choice.finish_reason;
    // Usage comes in the last chunk, with the finish reason or right after it.
    if (this.#finish && this.#usageSeen) {
      this.#flush(events);
      this.#end(events);
    }
    return events;
  }

  #reasoning(details: unknown[] | null | undefined, plain: string | null | undefined, events: MappedEvent[]) {
    // `reasoning` and `reasoning_details` carry the same text: take one (details first, as OpenRouter's SDK does).
    let text = "";
    let structured = false;
    for (const raw of details ?? []) {
      const detail = ReasoningDetail.safeParse(raw);
      if (!detail.success) continue;
      if (detail.data.type === "reasoning.text" && detail.data.text) text += detail.data.text;
      else if (detail.data.type === "reasoning.summary" && detail.data.summary) text += detail.data.summary;
      else continue;
      structured = true;
    }
    if (!structured && plain) text = plain;
    this.#tally.reasoning(text);
    // Hidden reasoning was asked for: some upstreams send it anyway. It is counted, never shown or kept.
    if (text && this.#options.includeThinking) events.push({ type: "thinking", delta: text });
  }

  #content(split: { thinking: string; text: string }, events: MappedEvent[]) {
    this.#tally.reasoning(split.thinking);
    this.#tally.text(split.text);
    if (split.thinking && this.#options.includeThinking)
      events.push({ type: "thinking", delta: split.thinking });
    if (!split.text) return;
    events.push({ type: "text", delta: split.text });
    for (const citation of this.#citations.appendText(split.text))
      events.push({ type: "citation", citation });
  }

  #flush(events: MappedEvent[]) {
    this.#content(this.#think.flush(), events);
  }

  #usage(usage: ChunkUsage): UsageReport {
    const reasoning = usage.completion_tokens_details?.reasoning_tokens ?? 0;
    const report: UsageReport = { modelCalls: 1 };
    if (usage.prompt_tokens != null) report.inputTokens = usage.prompt_tokens;
    // completion_tokens includes reasoning; Sonde counts them apart.
    if (usage.completion_tokens != null)
      report.outputTokens = Math.max(0, usage.completion_tokens - reasoning);
    if (this.#options.internalReasoning) report.internalReasoningTokens = reasoning;
    else report.reasoningTokens = reasoning;
    const searches = usage.server_tool_use?.web_search_requests;
    if (searches != null) report.searches = searches;
    if (usage.cost != null) report.providerCostUSD = usage.cost;
    return report;
  }

  #end(events: MappedEvent[]) {
    switch (this.#finish) {
      case "length":
        events.push({
          type: "gap",
          gap: {
            kind: "budget-exhausted",
            detail:
              "The model stopped at its output token limit (finish_reason length); the report is cut short.",
          },
        });
        return this.#terminate("incomplete", events);
      case "content_filter":
        events.push({
          type: "gap",
          gap: {
            kind: "interrupted",
            detail: "The provider's content filter stopped the answer (finish_reason content_filter).",
          },
        });
        return this.#terminate("incomplete", events);
      case "error":
        events.push({
          type: "error",
          error: {
            code: "provider_error",
            message: "openrouter: the generation ended with finish_reason error.",
            retryable: false,
          },
        });
        return this.#terminate("failed", events);
      default:
        return this.#terminate("completed", events);
    }
  }

  #terminate(status: JobStatus, events: MappedEvent[]) {
    this.#terminal = true;
    events.push({ type: "status", status });
  }
}
