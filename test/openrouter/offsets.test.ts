/**
 * Annotation indices (code points) become UTF-16 offsets without a copy of the report:
 * for any text appended in any pieces, every offset converts exactly as a walk over the
 * whole text would.
 */
import fc from "fast-check";
import { expect, it } from "vitest";
import { CodePointOffsets } from "../../providers/openrouter/offsets.js";
import { codePointLength, codePointsToUtf16 } from "../../src/text-offsets.js";

const piece = fc
  .array(fc.constantFrom("a", "é", "電", "🔋", "𝔸", " ", "[1]"), { maxLength: 6 })
  .map((p) => p.join(""));

it("converts every code-point offset as a walk over the whole text does, however the text was split", () => {
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      const offsets = new CodePointOffsets();
      for (const p of pieces) offsets.append(p);
      const text = pieces.join("");
      expect(offsets.length).toBe(text.length);
      expect(offsets.codePoints).toBe(codePointLength(text));
      for (let cp = -1; cp <= offsets.codePoints + 1; cp++)
        expect(offsets.utf16Of(cp)).toBe(codePointsToUtf16(text, Math.max(0, cp)));
    }),
    { numRuns: 200 },
  );
});
