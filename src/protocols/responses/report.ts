/**
 * The report as it streams: `output_text` deltas appended in order, each content part's
 * `url_citation` annotations held until the text they point into has arrived, or (for an
 * inline-citing dialect) markers found as the text grows. Counts what it emitted so a
 * final snapshot, or a ref's replay after attach, adds only what is new.
 */
import type { Citation } from "../../events.js";
import type { Logger, MappedEvent } from "../../provider.js";
import type { InlineCitations } from "./dialect.js";
import type { StreamEventOf } from "./events.js";
import { type FinalReport, isUrlCitation, type SourceIndex, TextPart } from "./text.js";

/**
 * What was delivered before a ref was taken, re-sent under an earlier cursor so the core
 * suppresses it but still aggregates it (see session.ts, poll fallback after attach).
 */
export interface DeliveredPrefix {
  type: "sonde.delivered";
  text: string;
  citations: Citation[];
}

/** How many of a ref's events a mapper has emitted (text in UTF-16 units). */
export interface EmittedCounts {
  reportLength: number;
  citations: number;
  /** Trail items (searches, tool calls) whose completed or failed event was emitted, in output order. */
  trail: number;
}

export class StreamedReport {
  #report = "";
  #parts = new Map<string, TextPart>();
  #citations = 0;
  readonly #inline: InlineCitations | undefined;
  readonly #sources: SourceIndex;
  readonly #logger: Logger;
  readonly #provider: string;

  constructor(options: {
    inline: InlineCitations | undefined;
    sources: SourceIndex;
    logger: Logger;
    provider: string;
  }) {
    this.#inline = options.inline;
    this.#sources = options.sources;
    this.#logger = options.logger;
    this.#provider = options.provider;
  }

  get emitted(): Omit<EmittedCounts, "trail"> {
    return { reportLength: this.#report.length, citations: this.#citations };
  }

  /** What of `final` lies between what this report emitted and what a ref says was delivered. */
  prefixOf(final: FinalReport, delivered: EmittedCounts): DeliveredPrefix | undefined {
    const text = final.text.slice(this.#report.length, Math.max(this.#report.length, delivered.reportLength));
    const citations = final.citations.slice(this.#citations, Math.max(this.#citations, delivered.citations));
    if (!text && citations.length === 0) return undefined;
    return { type: "sonde.delivered", text, citations };
  }

  partAdded(event: { item_id?: string | null; content_index?: number | null }): void {
    this.#partOf(event);
  }

  /** A message item is final, so is its text: annotations still waiting go out. */
  messageDone(itemId: string | null | undefined): MappedEvent[] {
    return [...this.#parts.entries()]
      .filter(([key]) => key.startsWith(`${itemId}:`))
      .flatMap(([, part]) => this.#flush(part, true));
  }

  #partOf(event: { item_id?: string | null; content_index?: number | null }): TextPart {
    const key = `${event.item_id}:${event.content_index ?? 0}`;
    let part = this.#parts.get(key);
    if (!part) {
      part = new TextPart(this.#report.length);
      this.#parts.set(key, part);
    }
    return part;
  }

  /** New report text: appended, then the citations it completes (text first: see `lastBatch`). */
  #append(part: TextPart, delta: string): MappedEvent[] {
    part.append(delta);
    this.#report += delta;
    return [{ type: "text", delta }, ...this.#inlineCitations(false)];
  }

  #inlineCitations(final: boolean): MappedEvent[] {
    if (!this.#inline) return [];
    const found = this.#inline.scan(this.#report, this.#sources, final);
    this.#citations += found.length;
    return found.map((citation) => ({ type: "citation", citation }));
  }

  delta(event: StreamEventOf<"response.output_text.delta">): MappedEvent[] {
    if (event.delta === "") return [];
    const part = this.#partOf(event);
    // Annotations that were waiting for this text go out with it (after it: text first).
    return [...this.#append(part, event.delta), ...this.#flush(part, false)];
  }

  annotation(event: StreamEventOf<"response.output_text.annotation.added">): MappedEvent[] {
    // An inline-citing provider's annotations would cite twice: its markers are the citations.
    if (this.#inline || !event.annotation || !isUrlCitation(event.annotation)) return [];
    const part = this.#partOf(event);
    part.pending.push(event.annotation);
    return this.#flush(part, false);
  }

  textDone(event: StreamEventOf<"response.output_text.done">): MappedEvent[] {
    const part = this.#partOf(event);
    const out: MappedEvent[] = [];
    // The final text is authoritative; deltas that never came are delivered here.
    if (typeof event.text === "string" && event.text.length > part.text.length) {
      if (event.text.startsWith(part.text))
        out.push(...this.#append(part, event.text.slice(part.text.length)));
      else {
        this.#logger.warn(`${this.#provider}: output_text.done disagrees with the streamed text`, {
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

  /** Text of the final report this mapper has not emitted, then its citations (see `lastBatch`). */
  final(final: FinalReport): MappedEvent[] {
    const out: MappedEvent[] = [];
    if (final.text.length > this.#report.length) {
      if (final.text.startsWith(this.#report)) {
        const rest = final.text.slice(this.#report.length);
        this.#report += rest;
        out.push({ type: "text", delta: rest });
      } else {
        this.#logger.warn(
          `${this.#provider}: the final report disagrees with the streamed text; kept the stream's`,
        );
      }
    }
    if (this.#inline) return [...out, ...this.#inlineCitations(true)];
    for (const part of this.#parts.values()) out.push(...this.#flush(part, true));
    for (const citation of final.citations.slice(this.#citations)) out.push({ type: "citation", citation });
    this.#citations = Math.max(this.#citations, final.citations.length);
    return out;
  }

  delivered(prefix: DeliveredPrefix): MappedEvent[] {
    const out: MappedEvent[] = [];
    if (prefix.text) {
      this.#report += prefix.text;
      out.push({ type: "text", delta: prefix.text });
      // The prefix's citations are the markers in its text: the scanner must not find them again.
      this.#inline?.scan(this.#report, this.#sources, false);
    }
    for (const citation of prefix.citations) out.push({ type: "citation", citation });
    this.#citations += prefix.citations.length;
    return out;
  }
}
