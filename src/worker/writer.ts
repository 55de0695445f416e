/**
 * A worker writes a job's events in the background while it keeps reading the job: one
 * write in flight per job, gathering what arrives within `lingerMs` (and during the write
 * before it) into one atomic step with the ref taken at its last event. Writes stay in `seq`
 * order (a Redis restart's NOSCRIPT reload cannot reorder them), and the round trips per job
 * are the number of bursts, not of events.
 */
import type { ResearchEvent } from "../events.js";

export interface Batch {
  events: ResearchEvent[];
  /** The job's ref right after the batch's last event, if it has one yet. */
  ref: unknown;
}

export class EventWriter {
  readonly #write: (batch: Batch) => Promise<void>;
  readonly #lingerMs: number;
  #queue: { event: ResearchEvent; ref: unknown }[] = [];
  #draining: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #failure: { error: unknown } | undefined;

  constructor(write: (batch: Batch) => Promise<void>, lingerMs = 0) {
    this.#write = write;
    this.#lingerMs = lingerMs;
  }

  /** Queues `event`; throws the failure of an earlier write (the store is failing). */
  push(event: ResearchEvent, ref: unknown): void {
    if (this.#failure) throw this.#failure.error;
    this.#queue.push({ event, ref });
    if (this.#draining || this.#timer) return;
    if (this.#lingerMs <= 0) this.#draining = this.#drain();
    else this.#timer = setTimeout(() => this.#start(), this.#lingerMs);
  }

  #start(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#draining ??= this.#drain();
  }

  /** Resolves once everything pushed is stored (now, without lingering); rejects if a write failed. */
  async flush(): Promise<void> {
    if (this.#timer) this.#start();
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
