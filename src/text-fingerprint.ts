/**
 * What a mapper must know of the text it streamed, without keeping a copy of it: its length
 * and a 32-bit FNV-1a fingerprint of its UTF-16 units, so that a stored copy (a final
 * snapshot) can be checked for starting with exactly the streamed text. The report itself
 * is the job's (its result); a mapper holding it too would double a long report's memory.
 */
const OFFSET_BASIS = 0x811c9dc5;
const PRIME = 0x01000193;

function fold(hash: number, text: string, end: number): number {
  let h = hash;
  for (let i = 0; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), PRIME);
  return h;
}

export class TextFingerprint {
  #length = 0;
  #hash = OFFSET_BASIS;

  /** Length in UTF-16 units. */
  get length(): number {
    return this.#length;
  }

  append(text: string): void {
    this.#hash = fold(this.#hash, text, text.length);
    this.#length += text.length;
  }

  /** Whether `text` starts with the text fingerprinted (a false match is a 1-in-2³² chance). */
  isPrefixOf(text: string): boolean {
    return text.length >= this.#length && fold(OFFSET_BASIS, text, this.#length) === this.#hash;
  }
}
