/**
 * Citation offsets arrive in the provider's unit (Unicode code points for OpenAI,
 * UTF-8 bytes for Gemini); Sonde's are UTF-16 code units, what `String.slice` takes.
 * Both converters walk `text` once from the start: O(n) per call, so a mapper that
 * converts many offsets into one growing text should keep a `OffsetCursor` instead.
 */

/** UTF-16 offset of the `codePoints`-th code point of `text` (clamped to the end). */
export function codePointsToUtf16(text: string, codePoints: number): number {
  let units = 0;
  for (let seen = 0; seen < codePoints && units < text.length; seen++) {
    const code = text.charCodeAt(units);
    units += code >= 0xd800 && code <= 0xdbff && units + 1 < text.length ? 2 : 1;
  }
  return units;
}

/** UTF-16 offset of UTF-8 byte offset `bytes` in `text` (clamped; mid-character rounds down). */
export function utf8BytesToUtf16(text: string, bytes: number): number {
  let units = 0;
  let seen = 0;
  while (units < text.length) {
    const code = text.codePointAt(units)!;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (seen + width > bytes) break;
    seen += width;
    units += code >= 0x10000 ? 2 : 1;
  }
  return units;
}

/**
 * Incremental converter for offsets that only move forward through a growing text:
 * amortized O(1) per converted offset. `unit` is the provider's unit.
 */
export class OffsetCursor {
  #units = 0;
  #counted = 0;
  constructor(readonly unit: "codepoint" | "utf8") {}

  /** UTF-16 offset of `offset` (in `unit`) in `text`; falls back to a full scan when moving backwards. */
  toUtf16(text: string, offset: number): number {
    if (offset < this.#counted) {
      this.#units = 0;
      this.#counted = 0;
    }
    while (this.#units < text.length) {
      const code = text.codePointAt(this.#units)!;
      const width =
        this.unit === "codepoint" ? 1 : code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
      if (this.#counted + width > offset) break;
      this.#counted += width;
      this.#units += code >= 0x10000 ? 2 : 1;
    }
    return this.#units;
  }
}

/** Length of `text` in Unicode code points (OpenAI's unit), without allocating. */
export function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) i++;
    count++;
  }
  return count;
}

/** Length of `text` in UTF-8 bytes (Gemini's unit), without allocating an encoded copy. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
