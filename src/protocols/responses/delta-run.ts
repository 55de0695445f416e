/**
 * Consecutive text deltas of one network read, joined into one wire event for a job whose
 * events nobody watches one by one (`result()` alone: see `ConnectOptions.coalesce`). The
 * mapper and the core then do their per-event work once per run instead of once per delta,
 * and a joined delta is never built as an event of its own: only its text is read from the
 * match. The report, its citations and the ref come out the same: the joined event has the
 * cursor of the last delta it holds, and a run's last delta goes on alone, so that what the
 * mapper records of the last event it mapped (its text and citations, which a ref keeps) is
 * what it records one delta at a time.
 */
import type { WireEvent } from "../../provider.js";
import { deltaCursorOf, deltaTextOf, sameDeltaPart, type TextDelta, textDeltaOf } from "./events.js";
import type { DecodedWireEvent } from "./mapper.js";
import { sequenceRank } from "./spec.js";

export class DeltaRun {
  readonly #out: WireEvent[];
  readonly #after: number;
  #first: RegExpExecArray | undefined;
  /** The delta before the last: the last one of the joined event. */
  #previous: RegExpExecArray | undefined;
  #last: RegExpExecArray | undefined;
  #texts: string[] = [];

  /** `out`: where runs go; `after`: deltas ranked at or below it stay single (a resume's repeats). */
  constructor(out: WireEvent[], after: number) {
    this.#out = out;
    this.#after = after;
  }

  /** A match of `execTextDelta`. */
  add(match: RegExpExecArray): void {
    const text = deltaTextOf(match);
    const last = this.#last;
    // An empty delta maps to nothing: as a run's last one it would leave the mapper's last
    // batch at the joined event (a ref's `resume.last`), so it ends the run and goes alone.
    if (last !== undefined && text !== "" && sameDeltaPart(last, match)) {
      this.#texts.push(text);
      this.#previous = last;
      this.#last = match;
      return;
    }
    this.end();
    const cursor = deltaCursorOf(match);
    const rank = cursor === undefined ? undefined : sequenceRank(cursor);
    if (text === "" || rank === undefined || rank <= this.#after) {
      this.#out.push(textDeltaOf(match));
      return;
    }
    this.#first = this.#last = match;
    this.#previous = undefined;
    this.#texts.push(text);
  }

  /** Hands over the run so far: all but its last delta joined (one as it came), then the last. */
  end(): void {
    const first = this.#first;
    const previous = this.#previous;
    const last = this.#last;
    if (first === undefined || last === undefined) return;
    const count = this.#texts.length - 1;
    if (count === 1) this.#out.push(textDeltaOf(first));
    else if (count > 1 && previous !== undefined) {
      this.#texts.pop();
      const wire = textDeltaOf(previous);
      const event: TextDelta = { ...wire.event, delta: this.#texts.join("") };
      const joined: DecodedWireEvent = { cursor: wire.cursor, data: event, event };
      this.#out.push(joined);
    }
    this.#out.push(textDeltaOf(last));
    this.#first = this.#previous = this.#last = undefined;
    this.#texts = [];
  }
}
