/**
 * A worker writes a job's events in the background while it keeps reading the job, in one
 * atomic step per batch with the ref taken at the batch's last event. One write is in flight
 * at a time, and writes start at most once per `intervalMs`: the first event after a quiet
 * spell is written at once (with whatever the same turn of the event loop yields), and a
 * burst that follows gathers until the interval is over. Each write costs a round trip and
 * two system calls whatever it holds, so a dense stream costs a few writes a second, not one
 * per event, and a watcher sees an isolated event without delay. Writes stay in `seq` order
 * (a Redis restart's NOSCRIPT reload cannot reorder them). At the job's end, `rest()` hands
 * the events not yet written to the run's final step, which stores them with `done` and the
 * result: one round trip at the end instead of two.
 *
 * Events arrive as the JSON text they are stored as, with consecutive seqs, and are joined
 * as they come: a batch is the texts of seqs `first`, `first + 1`, … joined by commas, which
 * the append scripts store as it is (bracketed when it holds more than one).
 */

export interface Batch {
  /** The stored JSON of `count` events, seqs `first`, `first + 1`, …, joined by commas. */
  joined: string;
  count: number;
  first: number;
  /** The job's ref right after the batch's last event, if it has one yet. */
  ref: unknown;
  /** The provider's job id, when the batch holds the `created` event. */
  created?: string | undefined;
}

export class EventWriter {
  readonly #write: (batch: Batch) => Promise<void>;
  readonly #intervalMs: number;
  #joined = "";
  #count = 0;
  #first = 0;
  #ref: unknown;
  #created: string | undefined;
  #draining: Promise<void> | undefined;
  #timer: { cancel(): void } | undefined;
  #failure: { error: unknown } | undefined;
  #pushed = 0;
  #stored = 0;
  /** What flushes wait for (a count of pushed events): until it is stored, writes do not wait out the interval. */
  #flushUntil = 0;
  #lastStart = Number.NEGATIVE_INFINITY;
  /** `rest()` took over what is left: nothing more is written from here. */
  #closed = false;

  constructor(write: (batch: Batch) => Promise<void>, intervalMs = 0) {
    this.#write = write;
    this.#intervalMs = intervalMs;
  }

  /**
   * Queues the event `seq` (stored as `text`; the job's ref is `ref` right after it; `created`:
   * the provider's job id, for the `created` event). Throws the failure of an earlier write
   * (the store is failing), or for a seq that does not follow the one queued before.
   */
  push(seq: number, text: string, ref: unknown, created?: string): void {
    if (this.#failure) throw this.#failure.error;
    if (this.#closed) throw new Error("EventWriter: push after rest()");
    if (this.#count === 0) {
      this.#first = seq;
      this.#joined = text;
    } else if (seq !== this.#first + this.#count) {
      throw new Error(`EventWriter: seq ${seq} does not follow ${this.#first + this.#count - 1}`);
    } else {
      this.#joined += `,${text}`;
    }
    this.#count++;
    this.#ref = ref;
    if (created !== undefined) this.#created = created;
    this.#pushed++;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#draining || this.#timer || this.#count === 0 || this.#failure || this.#closed) return;
    const wait = this.#stored < this.#flushUntil ? 0 : this.#lastStart + this.#intervalMs - performance.now();
    if (wait > 0) {
      const timer = setTimeout(() => this.#start(), wait);
      this.#timer = { cancel: () => clearTimeout(timer) };
    } else {
      const immediate = setImmediate(() => this.#start());
      this.#timer = { cancel: () => clearImmediate(immediate) };
    }
  }

  #start(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#draining ??= this.#drain();
  }

  /** Resolves once everything pushed before the call is stored (without waiting out the interval); rejects if a write failed. */
  async flush(): Promise<void> {
    const target = this.#pushed;
    // Events pushed after this call keep the interval: a flush is no reason to write them early.
    this.#flushUntil = Math.max(this.#flushUntil, target);
    while (this.#stored < target && !this.#failure && (this.#timer || this.#draining)) {
      if (this.#timer) this.#start();
      await this.#draining;
    }
    if (this.#failure) throw this.#failure.error;
  }

  /**
   * Ends the writer: waits for the write in flight (so nothing written later can overtake it),
   * then returns the events not written yet, which the caller stores in its own step, and
   * writes nothing more. Rejects if a write failed.
   */
  async rest(): Promise<Batch | undefined> {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    while (this.#draining) await this.#draining;
    if (this.#failure) throw this.#failure.error;
    return this.#take();
  }

  #take(): Batch | undefined {
    if (this.#count === 0) return undefined;
    const batch: Batch = {
      joined: this.#joined,
      count: this.#count,
      first: this.#first,
      ref: this.#ref,
      created: this.#created,
    };
    this.#joined = "";
    this.#count = 0;
    this.#created = undefined;
    return batch;
  }

  async #drain(): Promise<void> {
    const batch = this.#take()!;
    this.#lastStart = performance.now();
    try {
      await this.#write(batch);
      this.#stored += batch.count;
    } catch (error) {
      this.#failure = { error };
      this.#joined = "";
      this.#count = 0;
    } finally {
      this.#draining = undefined;
      this.#schedule();
    }
  }
}
