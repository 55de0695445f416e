/**
 * The report text and its citations. OpenAI cites by `url_citation` annotations whose
 * indexes count code points of one content part; Perplexity cites by inline markers
 * (`[web:N]`) that point at search results, which its dialect resolves (see dialect.ts).
 * Either way a citation's offsets end up as UTF-16 offsets of the whole report.
 */

import type { CountedText } from "../../counted-text.js";
import type { Citation } from "../../events.js";
import { TextFingerprint } from "../../text-fingerprint.js";
import type { InlineCitations, ResponsesDialect } from "./dialect.js";
import { searchItemKey } from "./tool-counts.js";
import {
  fetchedPagesOf,
  parseItem,
  searchResultsOf,
  type WireAnnotation,
  type WireResponse,
  type WireSearchResult,
} from "./wire.js";

/**
 * One `output_text` content part as it streams: where it starts in the report, what it
 * knows of its text, and the annotations waiting for their text (see annotations.ts). An
 * annotated part keeps its text (flat blocks, counted in code points: its annotations index
 * into it); any other keeps only a fingerprint, enough to check a final text against.
 */
export class TextPart {
  readonly #text: CountedText | TextFingerprint;
  readonly pending: WireAnnotation[] = [];
  constructor(
    readonly start: number,
    /** An annotated part's text, counted in code points (see annotations.ts); else only a fingerprint is kept. */
    counted?: CountedText,
  ) {
    this.#text = counted ?? new TextFingerprint();
  }

  /** UTF-16 length of the part's text. */
  get length(): number {
    return this.#text.length;
  }

  append(delta: string): void {
    this.#text.append(delta);
  }

  /** Whether `text` starts with the part's text so far. */
  isPrefixOf(text: string): boolean {
    const own = this.#text;
    return own instanceof TextFingerprint ? own.isPrefixOf(text) : text.startsWith(own.toString());
  }

  /** Length of the part's text in code points (an annotated part's). */
  get codePoints(): number {
    return (this.#text as CountedText).counted;
  }

  /** UTF-16 offset in the part of an offset in code points (an annotated part's). */
  utf16Of(codePoints: number): number {
    return (this.#text as CountedText).utf16Of(codePoints);
  }
}

/** Search results seen so far, by their integer id (unique within one response). */
export class SourceIndex {
  readonly #byId = new Map<number, WireSearchResult>();

  add(results: readonly WireSearchResult[]): void {
    for (const result of results) {
      if (typeof result.id === "number" && !this.#byId.has(result.id)) this.#byId.set(result.id, result);
    }
  }

  addAll(other: SourceIndex): void {
    this.add([...other.#byId.values()]);
  }

  get(id: number): WireSearchResult | undefined {
    return this.#byId.get(id);
  }
}

/** The report a finished Response holds: all `output_text` parts, concatenated in order. */
export interface FinalReport {
  text: string;
  citations: Citation[];
  /** Keys of the searches its items show (`web_search_call` ids, `search_results` positions). */
  searchIds: string[];
  /** Pages its `fetch_url_results` items list. */
  fetches: number;
  sources: SourceIndex;
}

/** The report of a Response object, with citations in UTF-16 offsets of that report. */
export function reportOf(response: WireResponse, dialect: ResponsesDialect): FinalReport {
  let text = "";
  const annotated: Citation[] = [];
  const searchIds: string[] = [];
  const sources = new SourceIndex();
  let fetches = 0;
  for (const [index, raw] of (response.output ?? []).entries()) {
    const item = parseItem(raw);
    if (!item) continue;
    if (item.type === "web_search_call") searchIds.push(item.id ?? `#${index}`);
    if (item.type === "search_results") {
      searchIds.push(searchItemKey(index));
      sources.add(searchResultsOf(item.results));
    }
    if (item.type === "fetch_url_results") fetches += fetchedPagesOf(item.contents).length;
    if (item.type !== "message") continue;
    for (const content of item.content ?? []) {
      if (content.type !== "output_text" || typeof content.text !== "string") continue;
      const start = text.length;
      text += content.text;
      if (dialect.annotations && content.annotations)
        annotated.push(...dialect.annotations.ofPart(content.text, content.annotations, start));
    }
  }
  const inline: InlineCitations | undefined = dialect.inlineCitations?.();
  const citations = inline ? [...inline.scan(text, sources, true)] : annotated;
  return { text, citations, searchIds, fetches, sources };
}
