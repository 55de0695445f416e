/**
 * Citations of a streamed OpenRouter answer: nested `url_citation` annotations and
 * top-level `citations` lists, deduplicated by normalized URL. Perplexity models send
 * every annotation with start = end = 0 (no position) and mark sources inline as
 * `[1]`, `[2]`…; marker n is the n-th source in Perplexity's own order (the top-level
 * list when there is one, else annotations in arrival order — openrouter-chat.md §4),
 * so the first marker of each source gives that citation its position.
 */
import { normalizeUrl } from "../../src/aggregate.js";
import type { Citation } from "../../src/events.js";
import { OffsetCursor } from "../../src/text-offsets.js";
import type { UrlCitation } from "./wire.js";

const MARKER = /\[(\d{1,3})\]/g;
/** A `[`, `[1`, `[12`, `[123` at the end of the text may still become a marker. */
const OPEN_MARKER = /\[\d{0,3}$/;

export class CitationTracker {
  /** The report so far (content only, never reasoning): offsets and markers index into it. */
  #report = "";
  #codePoints = 0;
  #offsets = new OffsetCursor("codepoint");
  /** URL key → whether a position was already given for it. */
  #seen = new Map<string, boolean>();
  /** URL keys whose title or excerpt was already given. */
  #described = new Set<string>();
  #annotationOrder: string[] = [];
  #listed: string[] | undefined;
  #markersDone = new Set<number>();
  #scanFrom = 0;
  /** Once an upstream gives real positions, inline markers are left alone. */
  #positioned = false;

  /** A marker was seen before the source it numbers (e.g. in the chunk that brought the source). */
  #unresolved = false;
  /** Sources were added to the numbering since the last scan. */
  #renumbered = false;

  /** Appends report text; returns citations placed by markers it completed. */
  appendText(delta: string): Citation[] {
    this.#report += delta;
    this.#codePoints += delta.length - (delta.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
    if (this.#positioned) return [];
    return this.#scan(this.#scanFrom);
  }

  /** Places markers that arrived before the annotation or list entry they number; call after adding sources. */
  placeEarlierMarkers(): Citation[] {
    if (this.#positioned || !this.#unresolved || !this.#renumbered) return [];
    this.#renumbered = false;
    this.#unresolved = false;
    return this.#scan(0);
  }

  #scan(from: number): Citation[] {
    const numbered = this.#listed ?? this.#annotationOrder;
    const found: Citation[] = [];
    MARKER.lastIndex = from;
    let end = from;
    for (let match = MARKER.exec(this.#report); match; match = MARKER.exec(this.#report)) {
      end = match.index + match[0].length;
      const n = Number(match[1]);
      const url = numbered[n - 1];
      if (!url) this.#unresolved = true;
      if (!url || this.#markersDone.has(n)) continue;
      this.#markersDone.add(n);
      const key = normalizeUrl(url);
      if (this.#seen.get(key)) continue;
      this.#seen.set(key, true);
      found.push({ url, startIndex: match.index, endIndex: end });
    }
    const open = OPEN_MARKER.exec(this.#report.slice(Math.max(end, this.#report.length - 4)));
    this.#scanFrom = open ? this.#report.length - open[0].length : this.#report.length;
    return found;
  }

  /** One `url_citation`; undefined when it adds nothing new. */
  annotation(value: UrlCitation): Citation | undefined {
    const start = value.start_index ?? 0;
    const end = value.end_index ?? 0;
    // start = end = 0 is how Perplexity says "no position".
    const hasPosition = end > start && start >= 0;
    const key = normalizeUrl(value.url);
    if (!this.#annotationOrder.some((url) => normalizeUrl(url) === key)) {
      this.#annotationOrder.push(value.url);
      this.#renumbered = true;
    }
    const known = this.#seen.get(key);
    if (hasPosition) this.#positioned = true;
    const places = hasPosition && known !== true;
    // A list entry or a marker may have named the URL already: its title and excerpt are still news.
    const describes = Boolean(value.title || value.content) && !this.#described.has(key);
    if (known !== undefined && !places && !describes) return undefined;
    const citation: Citation = { url: value.url };
    if (value.title) citation.title = value.title;
    if (value.content) citation.snippet = value.content;
    if (describes) this.#described.add(key);
    if (places) {
      // Indices are counted in code points (OpenAI's unit); a span beyond the text received
      // so far cannot be placed yet, so it goes without a position.
      if (end <= this.#codePoints) {
        citation.startIndex = this.#offsets.toUtf16(this.#report, start);
        citation.endIndex = this.#offsets.toUtf16(this.#report, end);
      }
    }
    this.#seen.set(key, known === true || citation.startIndex !== undefined);
    return citation;
  }

  /** A top-level `citations` list (the full list, possibly repeated on every chunk). */
  list(urls: readonly string[]): Citation[] {
    const listed = this.#listed;
    if (!listed || listed.length !== urls.length || urls.some((url, i) => url !== listed[i])) {
      this.#listed = [...urls];
      this.#renumbered = true;
    }
    const added: Citation[] = [];
    for (const url of urls) {
      const key = normalizeUrl(url);
      if (this.#seen.has(key)) continue;
      this.#seen.set(key, false);
      added.push({ url });
    }
    return added;
  }
}
