/**
 * OpenRouter chunks → research events, over the Chat Completions protocol's decoded
 * chunks. Stateful but flat: reasoning and report text pass straight through as deltas
 * and are never kept; only the report's length (with where its astral characters are,
 * for citation offsets) and the set of cited URLs are remembered.
 */

import type { JobStatus } from "../../src/events.js";
import { decodeChunk, reasoningOf, urlCitationsOf } from "../../src/protocols/chat-completions/chunks.js";
import { streamErrorOf } from "../../src/protocols/chat-completions/errors.js";
import { type ChunkWire, DONE } from "../../src/protocols/chat-completions/stream.js";
import { chatTokensOf } from "../../src/protocols/chat-completions/usage.js";
import type { Chunk, Delta } from "../../src/protocols/chat-completions/wire.js";
import type { Logger, MappedEvent } from "../../src/provider.js";
import { CitationTracker } from "./citations.js";
import { ReceivedTally } from "./estimate.js";
import { ThinkSplitter } from "./think.js";
import { usageReportOf } from "./usage.js";

/** What `connect` yields when the stream was lost before its end: time to estimate the cost. */
export const INTERRUPTED = "[INTERRUPTED]";

interface ReasoningFields {
  reasoning?: unknown;
  reasoning_details?: unknown;
}

function hasReasoning(choice: unknown): boolean {
  const delta = (choice as { delta?: ReasoningFields | null } | null)?.delta;
  return delta?.reasoning != null || delta?.reasoning_details != null;
}

/**
 * A chunk without its reasoning (`reasoning`, `reasoning_details`, and inline thinking in
 * `content`, replaced by `visibleContent`); the same object when it had none.
 */
export function withoutReasoning(data: unknown, visibleContent?: string): unknown {
  const choices = (data as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return data;
  // Nearly every chunk has nothing to strip: it is returned without a copy.
  if (visibleContent === undefined && !choices.some(hasReasoning)) return data;
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

  map(wire: ChunkWire): MappedEvent[] {
    this.#visible = undefined;
    const events = this.#map(wire);
    // A fast-read content chunk has no reasoning field: only inline thinking would need stripping.
    const plain = wire.event !== undefined && this.#visible === undefined;
    if (!this.#options.includeThinking && events.length && !plain) {
      // Hidden reasoning is not kept even inside the raw payloads the events carry.
      const raw = withoutReasoning(wire.data, this.#visible);
      if (raw !== wire.data) for (const event of events) event.rawEvent = raw;
    }
    return events;
  }

  #map(wire: ChunkWire): MappedEvent[] {
    if (this.#terminal) return [];
    const events: MappedEvent[] = [];
    if (wire.event !== undefined && this.#jobId !== undefined) {
      this.#text(wire.event, events);
      return events;
    }
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
    // Until the first chunk names the generation, every chunk is read whole (it may carry the id).
    const decoded = decodeChunk(wire.data, this.#jobId !== undefined);
    if (decoded.kind === "content") {
      this.#text(decoded.text, events);
      return events;
    }
    if (decoded.kind === "unrecognized") {
      this.#options.logger.debug("openrouter: ignoring an unrecognized chunk", { issue: decoded.issue });
      return events;
    }
    this.#chunk(decoded.chunk, events);
    return events;
  }

  #chunk(chunk: Chunk, events: MappedEvent[]): void {
    if (this.#jobId === undefined) {
      this.#jobId = chunk.id ?? this.#options.fallbackId() ?? `openrouter-${globalThis.crypto.randomUUID()}`;
      events.push(
        { type: "created", jobId: this.#jobId, provider: "openrouter", model: this.#options.model },
        { type: "status", status: "running" },
      );
    }
    const choice = chunk.choices?.[0];
    if (choice?.delta) this.#delta(choice.delta, events);
    for (const citation of chunk.citations ? this.#citations.list(chunk.citations) : [])
      events.push({ type: "citation", citation });
    // Markers in this chunk's text (or earlier) may number sources that only arrived with it.
    for (const citation of this.#citations.placeEarlierMarkers()) events.push({ type: "citation", citation });
    if (chunk.usage) {
      this.#usageSeen = true;
      const usage = usageReportOf(chatTokensOf(chunk.usage), this.#options.internalReasoning);
      events.push({ type: "usage", usage });
    }
    if (chunk.error) {
      this.#flush(events);
      events.push({ type: "error", error: streamErrorOf(chunk.error, "openrouter") });
      this.#terminate("failed", events);
      return;
    }
    if (choice?.finish_reason) this.#finish = choice.finish_reason;
    // Usage comes in the last chunk, with the finish reason or right after it.
    if (this.#finish && this.#usageSeen) {
      this.#flush(events);
      this.#end(events);
    }
  }

  #delta(delta: Delta, events: MappedEvent[]): void {
    const reasoning = reasoningOf(delta);
    this.#tally.reasoning(reasoning);
    // Hidden reasoning was asked for: some upstreams send it anyway. It is counted, never shown or kept.
    if (reasoning && this.#options.includeThinking) events.push({ type: "thinking", delta: reasoning });
    if (delta.content) this.#text(delta.content, events);
    for (const value of urlCitationsOf(delta)) {
      const citation = this.#citations.annotation(value);
      if (citation) events.push({ type: "citation", citation });
    }
  }

  /** Content, with any inline `<think>` block split off. */
  #text(content: string, events: MappedEvent[]): void {
    if (!content) return;
    // Nearly every chunk: report text, no thinking left to split off.
    if (this.#think.settled) {
      this.#reportText(content, events);
      return;
    }
    const split = this.#think.push(content);
    if (split.thinking) this.#visible = split.text;
    this.#content(split, events);
  }

  #content(split: { thinking: string; text: string }, events: MappedEvent[]) {
    this.#tally.reasoning(split.thinking);
    if (split.thinking && this.#options.includeThinking)
      events.push({ type: "thinking", delta: split.thinking });
    if (split.text) this.#reportText(split.text, events);
  }

  #reportText(text: string, events: MappedEvent[]): void {
    this.#tally.text(text);
    events.push({ type: "text", delta: text });
    for (const citation of this.#citations.appendText(text)) events.push({ type: "citation", citation });
  }

  #flush(events: MappedEvent[]) {
    this.#content(this.#think.flush(), events);
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
