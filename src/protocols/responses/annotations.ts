/**
 * Citations by `url_citation` annotations (OpenAI): each names a URL and the span of the
 * content part it cites, in code points of that part. A dialect that cites this way sets
 * `annotations` to `urlAnnotations`; one that does not (Perplexity cites by inline
 * markers) leaves this module out of its bundle.
 */

import { CountedText } from "../../counted-text.js";
import type { Citation } from "../../events.js";
import { OffsetCursor } from "../../text-offsets.js";
import type { TextPart } from "./text.js";
import type { WireAnnotation } from "./wire.js";

/** How a dialect reads `url_citation` annotations, streamed and in a finished Response. */
export interface UrlAnnotations {
  /** Whether the annotation is a citation (a `url_citation` with a URL): others are ignored. */
  cites(annotation: WireAnnotation): boolean;
  /** A content part's text as it streams, counted in code points (what the indexes count). */
  partText(): CountedText;
  /**
   * The citations of the part's waiting annotations (`part.pending`) whose text has arrived
   * (all of them when `force`), in order; they leave `pending`.
   */
  flush(part: TextPart, force: boolean): Citation[];
  /** The citations of a whole content part of a finished Response that starts at `start` in its report. */
  ofPart(text: string, annotations: readonly WireAnnotation[], start: number): Citation[];
}

const cites = (annotation: WireAnnotation) =>
  annotation.type === "url_citation" && typeof annotation.url === "string" && annotation.url.length > 0;

/** A citation of `annotation`, its code-point indexes converted to UTF-16 offsets of the report by `toUtf16`. */
function citationOf(annotation: WireAnnotation, toUtf16: (codePoints: number) => number): Citation {
  const citation: Citation = { url: annotation.url ?? "" };
  if (annotation.title) citation.title = annotation.title;
  if (typeof annotation.start_index === "number" && typeof annotation.end_index === "number") {
    citation.startIndex = toUtf16(Math.max(0, annotation.start_index));
    citation.endIndex = toUtf16(Math.max(0, annotation.end_index));
  }
  return citation;
}

export const urlAnnotations: UrlAnnotations = {
  cites,

  partText: () => new CountedText("codePoints"),

  flush(part, force) {
    const out: Citation[] = [];
    // An annotation waits until the text it points into has arrived (indexes count code points, as the server does).
    while (part.pending.length > 0 && (force || (part.pending[0]!.end_index ?? 0) <= part.codePoints)) {
      out.push(citationOf(part.pending.shift()!, (codePoints) => part.start + part.utf16Of(codePoints)));
    }
    return out;
  },

  ofPart(text, annotations, start) {
    // A whole part at once: a forward cursor converts its (mostly ordered) indexes.
    const cursor = new OffsetCursor("codepoint");
    return annotations
      .filter(cites)
      .map((annotation) => citationOf(annotation, (codePoints) => start + cursor.toUtf16(text, codePoints)));
  },
};
