/**
 * The report as it streams: `output_text` deltas appended in order, each content part's
 * `url_citation` annotations held until the text they point into has arrived, or (for an
 * inline-citing dialect) markers found as the text grows. Counts what it emitted so a
 * final snapshot, or a ref's replay after attach, adds only what is new. It keeps the open
 * parts' text (their citation indexes point into it), never a second copy of the report.
 */
import type { Citation } from "../../events.js";
import type { Logger, MappedEvent } from "../../provider.js";
import { TextFingerprint } from "../../text-fingerprint.js";
import type { UrlAnnotations } from "./annotations.js";
import type { InlineCitations } from "./dialect.js";
import type { StreamEventOf } from "./events.js";
import { type FinalReport, type SourceIndex, TextPart } from "./text.js";

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

/** Where a content part is addressed: `item_id` and `content_index`. */
type PartAddress = { item_id?: string | null; content_index?: number | null };

export class StreamedReport {
  /** The report's length and fingerprint: its text is the job's result, not kept here twice. */
  #streamed = new TextFingerprint();
  #parts = new Map<string, TextPart>();
  /** The part the last delta went to: nearly every delta goes to the same one. */
  #last: { itemId: string | null | undefined; contentIndex: number; part: TextPart } | undefined;
  #citations = 0;
  readonly #inline: InlineCitations | undefined;
  /** Set for a provider that cites by annotations (and not inline). */
  readonly #annotations: UrlAnnotations | undefined;
  readonly #sources: SourceIndex;
  readonly #logger: Logger;
  readonly #provider: string;

  constructor(options: {
    inline: InlineCitations | undefined;
    annotations: UrlAnnotations | undefined;
    sources: SourceIndex;
    logger: Logger;
    provider: string;
  }) {
    this.#inline = options.inline;
    this.#annotations = options.inline ? undefined : options.annotations;
    this.#sources = options.sources;
    this.#logger = options.logger;
    this.#provider = options.provider;
  }

  get emitted(): Omit<EmittedCounts, "trail"> {
    return { reportLength: this.#streamed.length, citations: this.#citations };
  }

  /** What of `final` lies between what this report emitted and what a ref says was delivered. */
  prefixOf(final: FinalReport, delivered: EmittedCounts): DeliveredPrefix | undefined {
    const length = this.#streamed.length;
    const text = final.text.slice(length, Math.max(length, delivered.reportLength));
    const citations = final.citations.slice(this.#citations, Math.max(this.#citations, delivered.citations));
    if (!text && citations.length === 0) return undefined;
    return { type: "sonde.delivered", text, citations };
  }

  partAdded(event: PartAddress): void {
    this.#partOf(event);
  }

  /** A message item is final, so is its text: annotations still waiting go out. */
  messageDone(itemId: string | null | undefined): MappedEvent[] {
    return [...this.#parts.entries()]
      .filter(([key]) => key.startsWith(`${itemId}:`))
      .flatMap(([, part]) => this.#flush(part, true));
  }

  #partOf(event: PartAddress): TextPart {
    const contentIndex = event.content_index ?? 0;
    const last = this.#last;
    if (last && last.itemId === event.item_id && last.contentIndex === contentIndex) return last.part;
    const key = `${event.item_id}:${contentIndex}`;
    let part = this.#parts.get(key);
    if (!part) {
      part = new TextPart(this.#streamed.length, this.#annotations?.partText());
      this.#parts.set(key, part);
    }
    this.#last = { itemId: event.item_id, contentIndex, part };
    return part;
  }

  /** New report text: appended, then the citations it completes (text first: see `lastBatch`). */
  #append(part: TextPart, delta: string): MappedEvent[] {
    part.append(delta);
    this.#streamed.append(delta);
    const out: MappedEvent[] = [{ type: "text", delta }];
    if (this.#inline) this.#inlineCitations(delta, false, out);
    return out;
  }

  /** Pushes the citations that `appended` completes onto `out`. */
  #inlineCitations(appended: string, final: boolean, out: MappedEvent[]): void {
    if (!this.#inline) return;
    const found = this.#inline.scan(appended, this.#sources, final);
    // Nearly every delta completes none: no iterator is made for them.
    for (let i = 0; i < found.length; i++) out.push({ type: "citation", citation: found[i]! });
    this.#citations += found.length;
  }

  delta(event: StreamEventOf<"response.output_text.delta">): MappedEvent[] {
    if (event.delta === "") return [];
    const part = this.#partOf(event);
    const out = this.#append(part, event.delta);
    // Annotations that were waiting for this text go out with it (after it: text first).
    if (part.pending.length > 0) out.push(...this.#flush(part, false));
    return out;
  }

  annotation(event: StreamEventOf<"response.output_text.annotation.added">): MappedEvent[] {
    // An inline-citing provider's annotations would cite twice: its markers are the citations.
    if (!this.#annotations || !event.annotation || !this.#annotations.cites(event.annotation)) return [];
    const part = this.#partOf(event);
    part.pending.push(event.annotation);
    return this.#flush(part, false);
  }

  textDone(event: StreamEventOf<"response.output_text.done">): MappedEvent[] {
    const part = this.#partOf(event);
    const out: MappedEvent[] = [];
    // The final text is authoritative; deltas that never came are delivered here.
    if (typeof event.text === "string" && event.text.length > part.length) {
      if (part.isPrefixOf(event.text)) out.push(...this.#append(part, event.text.slice(part.length)));
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
    if (!this.#annotations || part.pending.length === 0) return [];
    const citations = this.#annotations.flush(part, force);
    this.#citations += citations.length;
    return citations.map((citation) => ({ type: "citation", citation }));
  }

  /**
   * Text of the final report this mapper has not emitted, then its citations (see
   * `lastBatch`). Nothing is mapped after it, so the parts' text is let go.
   */
  final(final: FinalReport): MappedEvent[] {
    const out: MappedEvent[] = [];
    const length = this.#streamed.length;
    if (final.text.length > length) {
      if (this.#streamed.isPrefixOf(final.text)) {
        const rest = final.text.slice(length);
        this.#streamed.append(rest);
        out.push({ type: "text", delta: rest });
      } else {
        this.#logger.warn(
          `${this.#provider}: the final report disagrees with the streamed text; kept the stream's`,
        );
      }
    }
    if (this.#inline) {
      const rest = out.length > 0 ? (out[0] as { delta: string }).delta : "";
      this.#inlineCitations(rest, true, out);
    } else {
      for (const part of this.#parts.values()) out.push(...this.#flush(part, true));
      for (const citation of final.citations.slice(this.#citations)) out.push({ type: "citation", citation });
      this.#citations = Math.max(this.#citations, final.citations.length);
    }
    this.#parts.clear();
    this.#last = undefined;
    return out;
  }

  delivered(prefix: DeliveredPrefix): MappedEvent[] {
    const out: MappedEvent[] = [];
    if (prefix.text) {
      this.#streamed.append(prefix.text);
      out.push({ type: "text", delta: prefix.text });
      // The prefix's citations are the markers in its text: the scanner must not find them again.
      this.#inline?.scan(prefix.text, this.#sources, false);
    }
    for (const citation of prefix.citations) out.push({ type: "citation", citation });
    this.#citations += prefix.citations.length;
    return out;
  }
}
