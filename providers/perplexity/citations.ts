/**
 * Perplexity's inline citation markers: the answer text cites as `[web:N]`, where `N` is
 * the integer `id` of a search result of the same response (providers/perplexity/WIRE.md §6; its
 * `annotations` were empty in every capture). Matching is best effort, as the spec says:
 * a marker whose id names no known result is left as text. A marker's citation spans the
 * marker itself, in UTF-16 offsets of the report (a JS string's own indexes).
 */
import type { Citation } from "../../src/events.js";
import type { InlineCitations } from "../../src/protocols/responses/dialect.js";
import type { SourceIndex } from "../../src/protocols/responses/text.js";

const OPEN = "[web:";
/** Digits a marker's id may have (as many as an exact integer id of a result can need here). */
const MAX_DIGITS = 9;
/** How far back from the end a marker still arriving may start (`[web:` and nine digits). */
const LONGEST_PARTIAL = 16;
const NONE: readonly Citation[] = Object.freeze([]);

const isDigit = (code: number) => code >= 0x30 && code <= 0x39;

/** Whether `text` from `at` (a `[`) to its end may be the start of a marker: `[`, `[w` … `[web:123`. */
function partialMarker(text: string, at: number): boolean {
  const rest = text.length - at;
  if (rest > OPEN.length + MAX_DIGITS) return false;
  for (let i = 1; i < Math.min(rest, OPEN.length); i++) if (text[at + i] !== OPEN[i]) return false;
  for (let i = at + OPEN.length; i < text.length; i++) if (!isDigit(text.charCodeAt(i))) return false;
  return true;
}

/**
 * Finds markers by `indexOf` and character checks, no regular expression: a delta without
 * `[` is passed over at once, and no match keeps the text alive (V8 keeps the subject of
 * the last regexp match, `RegExp.lastMatch`, which after a final snapshot was the report).
 */
export class WebMarkers implements InlineCitations {
  /** UTF-16 length of the text scanned so far, held-back tail included. */
  #length = 0;
  /** The end of the text that may be the start of a marker still arriving. */
  #held = "";

  scan(appended: string, sources: SourceIndex, final: boolean): readonly Citation[] {
    if (this.#held === "" && appended.indexOf("[") < 0) {
      // Nearly every delta: no marker starts or ends in it. (The rest is a method of its own,
      // so that V8 optimizes this short path early: it counts a function's own bytecode run.)
      this.#length += appended.length;
      return NONE;
    }
    return this.#markers(appended, sources, final);
  }

  #markers(appended: string, sources: SourceIndex, final: boolean): readonly Citation[] {
    const text = this.#held + appended;
    const base = this.#length - this.#held.length;
    this.#length += appended.length;
    const out: Citation[] = [];
    let end = 0;
    for (let at = text.indexOf(OPEN); at >= 0; at = text.indexOf(OPEN, at + 1)) {
      let i = at + OPEN.length;
      let id = 0;
      while (i < text.length && i - at - OPEN.length < MAX_DIGITS && isDigit(text.charCodeAt(i)))
        id = id * 10 + text.charCodeAt(i++) - 0x30;
      if (i === at + OPEN.length || text.charCodeAt(i) !== 0x5d) continue; // no digits, or no `]`
      end = i + 1;
      const source = sources.get(id);
      if (!source) continue;
      const citation: Citation = { url: source.url, startIndex: base + at, endIndex: base + end };
      if (source.title) citation.title = source.title;
      if (source.snippet) citation.snippet = source.snippet;
      out.push(citation);
    }
    const open = final ? -1 : text.lastIndexOf("[");
    const held = open >= Math.max(end, text.length - LONGEST_PARTIAL) && partialMarker(text, open);
    this.#held = held ? text.slice(open) : "";
    return out;
  }
}
