/**
 * UTF-16 offsets of code-point offsets (OpenAI's unit for annotation indices) into the
 * report as it grows, without keeping a copy of the report: only where its astral
 * characters are (one code point, two UTF-16 units). O(delta) per append, O(log astral)
 * per lookup, a number per emoji or rare CJK character of memory.
 */

/** A high surrogate: the first half of an astral character. */
const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

export class CodePointOffsets {
  #units = 0;
  #codePoints = 0;
  /** Code-point offset of each astral character, ascending. */
  readonly #astral: number[] = [];

  /** Length in UTF-16 units. */
  get length(): number {
    return this.#units;
  }

  /** Length in code points. */
  get codePoints(): number {
    return this.#codePoints;
  }

  append(delta: string): void {
    this.#units += delta.length;
    if (!HIGH_SURROGATE.test(delta)) {
      this.#codePoints += delta.length;
      return;
    }
    // Counted per delta as `codePointLength` counts: a high surrogate and the unit after it are one.
    let codePoints = this.#codePoints;
    for (let i = 0; i < delta.length; i++, codePoints++) {
      const code = delta.charCodeAt(i);
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < delta.length) {
        this.#astral.push(codePoints);
        i++;
      }
    }
    this.#codePoints = codePoints;
  }

  /** UTF-16 offset of code-point offset `offset`, clamped to the text so far. */
  utf16Of(offset: number): number {
    if (offset <= 0) return 0;
    if (offset >= this.#codePoints) return this.#units;
    // Astral characters before `offset` each add one unit.
    const astral = this.#astral;
    let low = 0;
    let high = astral.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (astral[mid]! < offset) low = mid + 1;
      else high = mid;
    }
    return offset + low;
  }
}
