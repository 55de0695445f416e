/**
 * A worker writes a job's events in the background while it keeps reading the job: one
 * write in flight per job, and whatever arrived meanwhile goes in the next write, all in one
 * atomic step with the ref taken at its last event. Writes stay in `seq` order (a Redis
 * restart's NOSCRIPT reload cannot reorder them), and the round trips per job are the
 * number of bursts, not of events.
 */
import type { ResearchEvent } from "../events.js";

export interface Batch {
  events: ResearchEvent[];
  /** The job's ref right after the batch's last event, if it has one yet. */
  ref: unknown;
}

export class EventWriter {
  readonly #write: (batch: Batch) => Promise<void>;
  #queue: { event: ResearchEvent; ref: unknown }[] = [];
  #draining: Promise<void> | undefined;
  #failure: { error: unknown } | undefined;

  constructor(write: (batch: Batch) => Promise<void>) {
    this.#write = write;
  }

  /** Queues `event`; throws the failure of an earlier write (the store is failing). */
  push(event: ResearchEvent, ref: unknown): void {
    if (this.#failure) throw this.#failure.error;
    this.#queue.push({ event, ref });
    this.#draining ??= this.#drain();
  }

  /** Resolves once everything pushed is stored; rejects if a write failed. */
  async flush(): Promise<void> {
    await this.#draining;
    if (this.#failure) throw this.#failure.error;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0 && !this.#failure) {
        const items = this.#queue.splice(0);
        try {
          await this.#write({ events: items.map((item) => item.event), ref: items.at(-1)!.ref });
        } catch (error) {
          this.#failure = { error };
          this.#queue = [];
        }
      }
    } finally {
      this.#draining = undefined;
    }
  }
}
