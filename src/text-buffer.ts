/**
 * A report that grows by small deltas, held flat. `s += delta` builds a V8 rope (a cons
 * cell per delta, ~30 bytes each, every delta kept alive), and reading one character of
 * a rope flattens all of it, so reading while appending costs O(report) per delta. Here
 * deltas gather in a short list that is joined into a flat block every `BLOCK_UNITS`.
 * CountedText (counted-text.ts) adds offset conversion, reading only the block an offset
 * falls in; a buffer without offsets to convert leaves that code out of a bundle.
 */

/** Block size in UTF-16 units: small enough to walk per lookup, large enough to be few. */
const BLOCK_UNITS = 8192;

export interface Block {
  text: string;
  /** Where the block starts in the whole text, in UTF-16 units. */
  units: number;
}

export class TextBuffer {
  protected readonly blocks: Block[] = [];
  protected pending: string[] = [];
  #pendingUnits = 0;
  #length = 0;
  #joined: string | undefined = "";

  /** Length in UTF-16 units. */
  get length(): number {
    return this.#length;
  }

  append(delta: string): void {
    if (delta === "") return;
    this.pending.push(delta);
    this.#pendingUnits += delta.length;
    this.#length += delta.length;
    this.#joined = undefined;
    if (this.#pendingUnits >= BLOCK_UNITS) this.seal();
  }

  /** Joins the pending deltas into a block. */
  protected seal(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join("");
    this.blocks.push(this.block(text, this.#length - this.#pendingUnits));
    this.pending = [];
    this.#pendingUnits = 0;
  }

  /** A sealed block of `text` starting at `units` (a subclass adds what it counts). */
  protected block(text: string, units: number): Block {
    return { text, units };
  }

  /**
   * Whether toString() may replace the blocks with the joined text and cache it: with no
   * offsets to convert, one copy is kept; a subclass that reads blocks keeps them (and the
   * joined text is the caller's).
   */
  protected get collapsible(): boolean {
    return true;
  }

  /** The whole text, flat; cached until the next append. */
  toString(): string {
    if (this.#joined !== undefined) return this.#joined;
    this.seal();
    const blocks = this.blocks;
    const joined = blocks.length === 1 ? blocks[0]!.text : blocks.map((b) => b.text).join("");
    if (this.collapsible) {
      if (blocks.length > 1) {
        blocks.length = 0;
        blocks.push(this.block(joined, 0));
      }
      this.#joined = joined;
    }
    return joined;
  }
}
