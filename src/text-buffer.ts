/**
 * A report that grows by small deltas, held flat. `s += delta` builds a V8 rope (a cons
 * cell per delta, ~30 bytes each, every delta kept alive), and reading one character of
 * a rope flattens all of it, so reading while appending costs O(report) per delta. Here
 * deltas gather in a short list that is joined into a flat block every `BLOCK_UNITS`;
 * an offset conversion reads only the block the offset falls in.
 */
import { codePointLength, utf8Length } from "./text-offsets.js";

/** Block size in UTF-16 units: small enough to walk per lookup, large enough to be few. */
const BLOCK_UNITS = 8192;

interface Block {
  text: string;
  /** Where the block starts in the whole text, in each unit. */
  units: number;
  codePoints: number;
  bytes: number;
}

type Unit = "codePoints" | "bytes";

export class TextBuffer {
  readonly #blocks: Block[] = [];
  #pending: string[] = [];
  #pendingUnits = 0;
  /** Totals: the length with every pending delta, the counts with the counted ones (`#count`). */
  #length = 0;
  #codePoints = 0;
  #bytes = 0;
  /** Where the pending deltas start, in each unit. */
  #sealed: Block = { text: "", units: 0, codePoints: 0, bytes: 0 };
  /**
   * How many pending deltas `#codePoints` or `#bytes` include: they are counted when asked
   * (or sealed), each delta once, not as each arrives (most are never asked about).
   */
  #countedDeltas = 0;
  readonly #unit: Unit | undefined;
  #joined: string | undefined = "";

  /** `unit`: what the owner's offsets count (then `utf16Of` converts them); none for plain text. */
  constructor(unit?: Unit) {
    this.#unit = unit;
  }

  /** Length in UTF-16 units. */
  get length(): number {
    return this.#length;
  }

  /** Length in the constructor's unit (0 without one). */
  get counted(): number {
    this.#count();
    return this.#unit === "bytes" ? this.#bytes : this.#codePoints;
  }

  append(delta: string): void {
    if (delta === "") return;
    this.#pending.push(delta);
    this.#pendingUnits += delta.length;
    this.#length += delta.length;
    this.#joined = undefined;
    if (this.#pendingUnits >= BLOCK_UNITS) this.#seal();
  }

  /** Counts the pending deltas not counted yet, one by one as they came (a surrogate pair split across two counts as two, as before). */
  #count(): void {
    const pending = this.#pending;
    if (this.#unit === undefined || this.#countedDeltas === pending.length) return;
    for (let i = this.#countedDeltas; i < pending.length; i++) {
      if (this.#unit === "codePoints") this.#codePoints += codePointLength(pending[i]!);
      else this.#bytes += utf8Length(pending[i]!);
    }
    this.#countedDeltas = pending.length;
  }

  #seal(): void {
    if (this.#pending.length === 0) return;
    this.#count();
    const text = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join("");
    this.#blocks.push({ ...this.#sealed, text });
    this.#sealed = { text: "", units: this.#length, codePoints: this.#codePoints, bytes: this.#bytes };
    this.#pending = [];
    this.#pendingUnits = 0;
    this.#countedDeltas = 0;
  }

  /** The whole text, flat; cached until the next append. */
  toString(): string {
    if (this.#joined !== undefined) return this.#joined;
    this.#seal();
    const blocks = this.#blocks;
    const joined = blocks.length === 1 ? blocks[0]!.text : blocks.map((b) => b.text).join("");
    // Keep one copy: without offsets to convert, the joined text replaces the blocks; with
    // them, the blocks stay and the joined text is the caller's (not cached).
    if (this.#unit === undefined) {
      if (blocks.length > 1) {
        blocks.length = 0;
        blocks.push({ text: joined, units: 0, codePoints: 0, bytes: 0 });
      }
      this.#joined = joined;
    }
    return joined;
  }

  /**
   * UTF-16 offset of `offset` in the constructor's unit (clamped to the end; a byte offset
   * inside a character rounds down). O(block), whatever the report's length.
   */
  utf16Of(offset: number): number {
    const unit = this.#unit;
    if (unit === undefined) throw new TypeError("TextBuffer: no unit to convert from");
    if (offset <= 0) return 0;
    this.#count();
    let block: Block;
    if (offset >= this.#sealed[unit]) {
      // In the pending deltas, compacted to one string (shorter than a block), all counted.
      if (this.#pending.length > 1) {
        this.#pending = [this.#pending.join("")];
        this.#countedDeltas = 1;
      }
      block = { ...this.#sealed, text: this.#pending[0] ?? "" };
    } else {
      // The last sealed block starting at or before `offset`.
      const blocks = this.#blocks;
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
