/**
 * Perplexity's `[web:N]` scanner on a stream cut anywhere: the citations it finds delta by
 * delta are the ones a regular expression finds in the whole text (same ids, same UTF-16
 * offsets), with markers split across deltas, unknown ids, too many digits, near-misses.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { WebMarkers } from "../../providers/perplexity/citations.js";
import type { Citation } from "../../src/events.js";
import { SourceIndex } from "../../src/protocols/responses/text.js";

const sources = new SourceIndex();
sources.add(
  Array.from({ length: 20 }, (_, i) => ({
    id: i + 1,
    url: `https://example.org/${i + 1}`,
    title: `Source ${i + 1}`,
    ...(i % 2 === 0 && { snippet: "a snippet" }),
  })),
);

/** What the whole text cites, by the pattern the marker grammar is. */
function whole(text: string): Citation[] {
  return [...text.matchAll(/\[web:(\d{1,9})\]/g)].flatMap((match) => {
    const source = sources.get(Number(match[1]));
    if (!source) return [];
    const citation: Citation = {
      url: source.url,
      startIndex: match.index,
      endIndex: match.index + match[0].length,
    };
    if (source.title) citation.title = source.title;
    if (source.snippet) citation.snippet = source.snippet;
    return [citation];
  });
}

const piece = fc.oneof(
  fc.constantFrom(
    "battery ",
    "電池 ",
    "🔋",
    "a[b] ",
    "[",
    "]",
    "[we",
    "[web",
    "[web:",
    "[web:]",
    "[[web:3]",
    "web:4]",
  ),
  fc.integer({ min: 0, max: 25 }).map((n) => `[web:${n}]`),
  fc.constantFrom("[web:0000000007]", "[web:123456789]", "[web:1234567890]", "[web:12", "[web:x]"),
  fc.string({ maxLength: 4 }),
);

it("finds, delta by delta, exactly the markers of the whole text", () => {
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 12 }), (pieces, cuts) => {
      const text = pieces.join("");
      const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
      const deltas = [0, ...at, text.length]
        .slice(1)
        .map((end, i, ends) => text.slice(i ? ends[i - 1] : 0, end));
      const scanner = new WebMarkers();
      const found = deltas.flatMap((delta) => [...scanner.scan(delta, sources, false)]);
      found.push(...scanner.scan("", sources, true));
      expect(found).toEqual(whole(text));
    }),
    { numRuns: 2000, seed: 11 },
  );
});
