/**
 * Citations of a streamed OpenRouter answer: nested `url_citation` annotations and
 * top-level `citations` lists, deduplicated by normalized URL. Perplexity models send
 * every annotation with start = end = 0 (no position) and mark sources inline as
 * `[1]`, `[2]`…; marker n is the n-th source in Perplexity's own order (the top-level
 * list when there is one, else annotations in arrival order — WIRE.md §4),
 * so the first marker of each source gives that citation its position.
 */
import { normalizeUrl } from "../../src/aggregate.js";
import type { Citation } from "../../src/events.js";
import type { UrlCitation } from "../../src/protocols/chat-completions/wire.js";
import { CodePointOffsets } from "./offsets.js";

const MARKER = /\[(\d{1,3})\]/g;
/** A `[`, `[1`, `[12`, `[123` at the end of the text may still become a marker. */
const OPEN_MARKER = /\[\d{0,3}$/;

/** What most calls return; never added to. */
const NONE: Citation[] = [];

/** A marker whose source had not arrived when it was read. */
interface WaitingMarker {
  n: number;
  start: number;
  end: number;
}

/**
 * Every call is O(its own input): markers are read once, from the new text only (plus
 * the few characters of a marker still open at the end), and a marker read before its
 * source is remembered, so a late source never makes the report be read again.
 */
export class CitationTracker {
  /** Where the report so far (content only, never reasoning) is, in both units; not its text. */
  #report = new CodePointOffsets();
  /** Text not yet read for markers: the new delta, after a marker left open by the last one. */
  #unread = "";
  /** URL key → whether a position was already given for it. */
  #seen = new Map<string, boolean>();
  /** URL keys whose title or excerpt was already given. */
  #described = new Set<string>();
  #annotationOrder: string[] = [];
  #annotationKeys = new Set<string>();
  #listed: string[] | undefined;
  #markersDone = new Set<number>();
  /** The first marker of each number whose source was unknown when it was read, in text order. */
  #waiting: WaitingMarker[] = [];
  #waitingNumbers = new Set<number>();
  /** Once an upstream gives real positions, inline markers are left alone. */
  #positioned = false;
  /** Sources were added to the numbering since markers were last matched. */
  #renumbered = false;

  /** Appends report text; returns citations placed by markers it completed. */
  appendText(delta: string): readonly Citation[] {
    const base = this.#report.length - this.#unread.length;
    this.#report.append(delta);
    if (this.#positioned) return NONE;
    // Most deltas hold no marker and finish none: nothing to read.
    if (this.#unread === "" && !delta.includes("[")) return NONE;
    const text = this.#unread + delta;
    const found: Citation[] = [];
    MARKER.lastIndex = 0;
    let end = 0;
    for (let match = MARKER.exec(text); match; match = MARKER.exec(text)) {
      end = match.index + match[0].length;
      const n = Number(match[1]);
      if (this.#markersDone.has(n)) continue;
      const marker = { n, start: base + match.index, end: base + end };
      if (!this.#place(marker, found) && !this.#waitingNumbers.has(n)) {
        this.#waitingNumbers.add(n);
        this.#waiting.push(marker);
      }
    }
    const open = OPEN_MARKER.exec(text.slice(Math.max(end, text.length - 4)));
    this.#unread = open ? open[0] : "";
    return found;
  }

  /** Gives marker `n`'s source its position, when the numbering has it; false when it is not known yet. */
  #place(marker: WaitingMarker, found: Citation[]): boolean {
    const url = (this.#listed ?? this.#annotationOrder)[marker.n - 1];
    if (!url) return false;
    this.#markersDone.add(marker.n);
    const key = normalizeUrl(url);
    if (!this.#seen.get(key)) {
      this.#seen.set(key, true);
      found.push({ url, startIndex: marker.start, endIndex: marker.end });
    }
    return true;
  }

  /** Places markers that arrived before the annotation or list entry they number; call after adding sources. */
  placeEarlierMarkers(): Citation[] {
    if (this.#positioned || this.#waiting.length === 0 || !this.#renumbered) return [];
    this.#renumbered = false;
    const found: Citation[] = [];
    this.#waiting = this.#waiting.filter((marker) => {
      if (!this.#place(marker, found)) return true;
      this.#waitingNumbers.delete(marker.n);
      return false;
    });
    // In text order, as a scan from the start would find them.
    return found.sort((a, b) => a.startIndex! - b.startIndex!);
  }

  /** One `url_citation`; undefined when it adds nothing new. */
  annotation(value: UrlCitation): Citation | undefined {
    const start = value.start_index ?? 0;
    const end = value.end_index ?? 0;
    // start = end = 0 is how Perplexity says "no position".
    const hasPosition = end > start && start >= 0;
    const key = normalizeUrl(value.url);
    if (!this.#annotationKeys.has(key)) {
      this.#annotationKeys.add(key);
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
      if (end <= this.#report.codePoints) {
        citation.startIndex = this.#report.utf16Of(start);
        citation.endIndex = this.#report.utf16Of(end);
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
