/**
 * A TextBuffer that converts offsets in a provider's unit (Unicode code points for OpenAI,
 * UTF-8 bytes for Gemini) into UTF-16 offsets: each block records where it starts in that
 * unit, so a conversion reads only the block the offset falls in, whatever the length.
 */
import { type Block, TextBuffer } from "./text-buffer.js";
import { codePointLength, utf8Length } from "./text-offsets.js";

type Unit = "codePoints" | "bytes";

interface CountedBlock extends Block {
  codePoints: number;
  bytes: number;
}

export class CountedText extends TextBuffer {
  readonly #unit: Unit;
  /** Totals of the counted deltas (sealed ones, and the pending ones up to `#countedDeltas`). */
  #codePoints = 0;
  #bytes = 0;
  /** Where the pending deltas start, in each unit. */
  #sealed: CountedBlock = { text: "", units: 0, codePoints: 0, bytes: 0 };
  /**
   * How many pending deltas the totals include: they are counted when asked (or sealed),
   * each delta once, not as each arrives (most are never asked about).
   */
  #countedDeltas = 0;

  /** `unit`: what the owner's offsets count. */
  constructor(unit: Unit) {
    super();
    this.#unit = unit;
  }

  /** Length in the constructor's unit. */
  get counted(): number {
    this.#count();
    return this.#unit === "bytes" ? this.#bytes : this.#codePoints;
  }

  /** Counts the pending deltas not counted yet, one by one as they came (a surrogate pair split across two counts as two). */
  #count(): void {
    const pending = this.pending;
    for (let i = this.#countedDeltas; i < pending.length; i++) {
      if (this.#unit === "codePoints") this.#codePoints += codePointLength(pending[i]!);
      else this.#bytes += utf8Length(pending[i]!);
    }
    this.#countedDeltas = pending.length;
  }

  protected override seal(): void {
    if (this.pending.length === 0) return;
    this.#count();
    super.seal();
    this.#sealed = { text: "", units: this.length, codePoints: this.#codePoints, bytes: this.#bytes };
    this.#countedDeltas = 0;
  }

  protected override block(text: string, _units: number): CountedBlock {
    return { ...this.#sealed, text };
  }

  protected override get collapsible(): boolean {
    return false;
  }

  /**
   * UTF-16 offset of `offset` in the constructor's unit (clamped to the end; a byte offset
   * inside a character rounds down). O(block), whatever the text's length.
   */
  utf16Of(offset: number): number {
    const unit = this.#unit;
    if (offset <= 0) return 0;
    this.#count();
    let block: CountedBlock;
    if (offset >= this.#sealed[unit]) {
      // In the pending deltas, compacted to one string (shorter than a block), all counted.
      if (this.pending.length > 1) {
        this.pending = [this.pending.join("")];
        this.#countedDeltas = 1;
      }
      block = { ...this.#sealed, text: this.pending[0] ?? "" };
    } else {
      // The last sealed block starting at or before `offset`.
      const blocks = this.blocks as CountedBlock[];
      let low = 0;
      let high = blocks.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if (blocks[mid]![unit] <= offset) low = mid;
        else high = mid - 1;
      }
      block = blocks[low]!;
    }
    const rest = offset - block[unit];
    const text = block.text;
    let units = 0;
    let seen = 0;
    while (units < text.length) {
      const code = text.codePointAt(units)!;
      const width = unit === "codePoints" ? 1 : code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
      if (seen + width > rest) break;
      seen += width;
      units += code >= 0x10000 ? 2 : 1;
    }
    return block.units + units;
  }
}
