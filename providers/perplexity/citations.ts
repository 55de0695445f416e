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
const PARTIAL = /\[(?:w(?:e(?:b(?::\d{0,9})?)?)?)?$/;

export class WebMarkers implements InlineCitations {
  /** Where the next scan starts: past the last marker found, or at a marker still arriving. */
  #from = 0;

  scan(report: string, sources: SourceIndex, final: boolean): Citation[] {
    const out: Citation[] = [];
    MARKER.lastIndex = this.#from;
    let end = this.#from;
    for (let match = MARKER.exec(report); match; match = MARKER.exec(report)) {
      end = MARKER.lastIndex;
      const source = sources.get(Number(match[1]));
      if (!source) continue;
      const citation: Citation = { url: source.url, startIndex: match.index, endIndex: end };
      if (source.title) citation.title = source.title;
      if (source.snippet) citation.snippet = source.snippet;
      out.push(citation);
    }
    const tail = final ? null : PARTIAL.exec(report.slice(Math.max(end, report.length - 16)));
    this.#from = tail ? report.length - tail[0].length : report.length;
    this.#from = Math.max(this.#from, end);
    return out;
  }
}
