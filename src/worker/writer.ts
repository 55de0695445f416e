/**
 * A worker writes a job's events in the background while it keeps reading the job, in one
 * atomic step per batch with the ref taken at the batch's last event. One write is in flight
 * at a time, and writes start at most once per `intervalMs`: the first event after a quiet
 * spell is written at once (with whatever the same turn of the event loop yields), and a
 * burst that follows gathers until the interval is over. Each write costs a round trip and
 * two system calls whatever it holds, so a dense stream costs a few writes a second, not one
 * per event, and a watcher sees an isolated event without delay. Writes stay in `seq` order
 * (a Redis restart's NOSCRIPT reload cannot reorder them).
 */
import type { ResearchEvent } from "../events.js";

export interface Batch {
  events: ResearchEvent[];
  /** The job's ref right after the batch's last event, if it has one yet. */
  ref: unknown;
}

export class EventWriter {
  readonly #write: (batch: Batch) => Promise<void>;
  readonly #intervalMs: number;
  #queue: { event: ResearchEvent; ref: unknown }[] = [];
  #draining: Promise<void> | undefined;
  #timer: { cancel(): void } | undefined;
  #failure: { error: unknown } | undefined;
  #pushed = 0;
  #stored = 0;
  /** Flushes waiting: while one is, writes do not wait out the interval. */
  #flushing = 0;
  #lastStart = Number.NEGATIVE_INFINITY;

  constructor(write: (batch: Batch) => Promise<void>, intervalMs = 0) {
    this.#write = write;
    this.#intervalMs = intervalMs;
  }

  /** Queues `event`; throws the failure of an earlier write (the store is failing). */
  push(event: ResearchEvent, ref: unknown): void {
    if (this.#failure) throw this.#failure.error;
    this.#queue.push({ event, ref });
    this.#pushed++;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#draining || this.#timer || this.#queue.length === 0 || this.#failure) return;
    const wait = this.#flushing > 0 ? 0 : this.#lastStart + this.#intervalMs - performance.now();
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
    this.#flushing++;
    try {
      while (this.#stored < target && !this.#failure && (this.#timer || this.#draining)) {
        if (this.#timer) this.#start();
        await this.#draining;
      }
    } finally {
      this.#flushing--;
    }
    if (this.#failure) throw this.#failure.error;
  }

  async #drain(): Promise<void> {
    const items = this.#queue.splice(0);
    this.#lastStart = performance.now();
    try {
      await this.#write({ events: items.map((item) => item.event), ref: items.at(-1)!.ref });
      this.#stored += items.length;
    } catch (error) {
      this.#failure = { error };
      this.#queue = [];
    } finally {
      this.#draining = undefined;
      this.#schedule();
    }
  }
}
