/**
 * Consecutive text deltas of one network read, joined into one wire event for a job whose
 * events nobody watches one by one (`result()` alone: see `ConnectOptions.coalesce`). The
 * mapper and the core then do their per-event work once per run instead of once per delta;
 * the report, its citations and the ref come out the same: the joined event has the cursor
 * of the last delta it holds, and a run's last delta goes on alone, so that what the mapper
 * records of the last event it mapped (its text and citations, which a ref keeps) is what it
 * records one delta at a time.
 */
import type { WireEvent } from "../../provider.js";
import type { TextDelta } from "./events.js";
import type { DecodedWireEvent } from "./mapper.js";
import { sequenceRank } from "./spec.js";

type Delta = { cursor: string | undefined; data: TextDelta; event: TextDelta };

export class DeltaRun {
  readonly #out: WireEvent[];
  readonly #after: number;
  #first: Delta | undefined;
  /** The delta before the last: the last one of the joined event. */
  #previous: Delta | undefined;
  #last: Delta | undefined;
  #texts: string[] = [];

  /** `out`: where runs go; `after`: deltas ranked at or below it stay single (a resume's repeats). */
  constructor(out: WireEvent[], after: number) {
    this.#out = out;
    this.#after = after;
  }

  add(delta: Delta): void {
    const last = this.#last;
    const event = delta.event;
    if (
      last !== undefined &&
      last.event.item_id === event.item_id &&
      last.event.content_index === event.content_index &&
      last.event.output_index === event.output_index
    ) {
      this.#texts.push(event.delta);
      this.#previous = last;
      this.#last = delta;
      return;
    }
    this.end();
    const rank = delta.cursor === undefined ? undefined : sequenceRank(delta.cursor);
    if (rank === undefined || rank <= this.#after) {
      this.#out.push(delta);
      return;
    }
    this.#first = this.#last = delta;
    this.#previous = undefined;
    this.#texts.push(event.delta);
  }

  /** Hands over the run so far: all but its last delta joined (one as it came), then the last. */
  end(): void {
    const first = this.#first;
    const previous = this.#previous;
    const last = this.#last;
    if (first === undefined || last === undefined) return;
    const count = this.#texts.length - 1;
    if (count === 1) this.#out.push(first);
    else if (count > 1 && previous !== undefined) {
      this.#texts.pop();
      const event: TextDelta = { ...previous.event, delta: this.#texts.join("") };
      const joined: DecodedWireEvent = { cursor: previous.cursor, data: event, event };
      this.#out.push(joined);
    }
    this.#out.push(last);
    this.#first = this.#previous = this.#last = undefined;
    this.#texts = [];
  }
}
