/**
 * The opaque cursors a job delivered last, to drop the events a resumed stream repeats
 * (cursors that order themselves, such as sequence numbers, are compared as numbers
 * instead). Recording one is a store into a ring, and a lookup is one native scan of it:
 * the caller looks up a connection's first pull event by event (against a `snapshot`) and
 * only the start of later ones, since a stream is ordered and what a reconnection repeats
 * comes first. A hash set updated for every event cost a Gemini job about 6% of its time.
 */
export class SeenCursors {
  readonly #ring: (string | undefined)[];
  #at = 0;

  /** `size`: how many of the last cursors are remembered (a resume overlaps by a few). */
  constructor(size: number) {
    this.#ring = new Array<string | undefined>(size).fill(undefined);
  }

  has(cursor: string): boolean {
    return this.#ring.includes(cursor);
  }

  /** The remembered cursors as a set, for looking up many events at once. */
  snapshot(): Set<string> {
    const set = new Set<string>();
    for (const cursor of this.#ring) if (cursor !== undefined) set.add(cursor);
    return set;
  }

  add(cursor: string): void {
    this.#ring[this.#at] = cursor;
    this.#at = this.#at + 1 === this.#ring.length ? 0 : this.#at + 1;
  }
}
