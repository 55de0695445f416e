import { expect, test } from "vitest";
import { CountedText } from "../../src/counted-text.js";
import { TextBuffer } from "../../src/text-buffer.js";
import { codePointsToUtf16, utf8BytesToUtf16 } from "../../src/text-offsets.js";

// Deltas mixing ASCII, two-byte, three-byte and astral characters, long enough to span many blocks.
const deltas = Array.from({ length: 6_000 }, (_, i) =>
  i % 7 === 0 ? `é😀 ${i} ` : i % 5 === 0 ? `電池${i}` : `tok${i} `,
);
const whole = deltas.join("");

test("the buffer's text is the concatenation of its deltas, flat", () => {
  const buffer = new TextBuffer();
  for (const delta of deltas) buffer.append(delta);
  expect(buffer.length).toBe(whole.length);
  expect(buffer.toString()).toBe(whole);
  buffer.append("tail");
  expect(buffer.toString()).toBe(`${whole}tail`);
});

test("code point and UTF-8 offsets convert as a scan from the start would, in any block", () => {
  const points = new CountedText("codePoints");
  const bytes = new CountedText("bytes");
  for (const [i, delta] of deltas.entries()) {
    points.append(delta);
    bytes.append(delta);
    if (i % 997 === 0) {
      // Offsets inside the pending (unsealed) text too.
      const sofar = deltas.slice(0, i + 1).join("");
      expect(points.utf16Of(points.counted - 1)).toBe(codePointsToUtf16(sofar, points.counted - 1));
    }
  }
  expect(points.counted).toBe([...whole].length);
  expect(bytes.counted).toBe(new TextEncoder().encode(whole).length);
  for (const offset of [
    0,
    1,
    2,
    3,
    100,
    8191,
    8192,
    8193,
    20_000,
    40_001,
    points.counted,
    points.counted + 5,
  ])
    expect(points.utf16Of(offset)).toBe(codePointsToUtf16(whole, offset));
  for (const offset of [0, 1, 2, 5, 9, 100, 8192, 8195, 30_001, 60_003, bytes.counted, bytes.counted + 9])
    expect(bytes.utf16Of(offset)).toBe(utf8BytesToUtf16(whole, offset));
});
