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

const MARKER = /\[web:(\d{1,9})\]/g;
/** What the end of the text may hold of a marker not yet complete. */
const EMPTY = /(?:)/;
const PARTIAL = /\[(?:w(?:e(?:b(?::\d{0,9})?)?)?)?$/;

export class WebMarkers implements InlineCitations {
  /** UTF-16 length of the text scanned so far, held-back tail included. */
  #length = 0;
  /** The end of the text that may be the start of a marker still arriving. */
  #held = "";

  scan(appended: string, sources: SourceIndex, final: boolean): Citation[] {
    if (this.#held === "" && !appended.includes("[")) {
      // Nearly every delta: no marker starts or ends in it.
      this.#length += appended.length;
      return [];
    }
    const text = this.#held + appended;
    const base = this.#length - this.#held.length;
    this.#length += appended.length;
    const out: Citation[] = [];
    MARKER.lastIndex = 0;
    let end = 0;
    for (let match = MARKER.exec(text); match; match = MARKER.exec(text)) {
      end = MARKER.lastIndex;
      const source = sources.get(Number(match[1]));
      if (!source) continue;
      const citation: Citation = { url: source.url, startIndex: base + match.index, endIndex: base + end };
      if (source.title) citation.title = source.title;
      if (source.snippet) citation.snippet = source.snippet;
      out.push(citation);
    }
    const tail = final ? null : PARTIAL.exec(text.slice(Math.max(end, text.length - 16)));
    this.#held = tail ? tail[0] : "";
    // V8 keeps the subject of the last successful match (RegExp.lastMatch, `$_`) alive: after
    // a whole report (a final snapshot), a match on an empty string lets the report go.
    if (text.length > 4096) EMPTY.exec("");
    return out;
  }
}
