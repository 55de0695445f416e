import type { ResearchEvent } from "./events.js";

/** What a job gives the iterator of its one consumption (see `JobEvents`). */
export interface JobEventsSource {
  /** The job's drive: the delivered events, in arrays. */
  drive: AsyncGenerator<ResearchEvent[]>;
  /**
   * What `created()` pulled from the same drive before the iteration began, that pull's
   * failure, and what delivering its event `index` does (the job's ref moves back to it).
   */
  early?: { events: ResearchEvent[]; pulled: Promise<unknown>; delivered(index: number): void } | undefined;
  /**
   * The next event without an async step, while the drive is parked in the middle of a
   * network read; undefined when only the drive can go on. Throws what the drive would.
   */
  fast(): ResearchEvent | undefined;
  /** The drive is about to be resumed: it is no longer parked. */
  unpark(): void;
  /** A throw out of the drive: the job's result must not stay pending. */
  failed(error: unknown): void;
  /** The consumer closed the iteration (the drive is returned): a drive that never ran must still end the job. */
  closed(): Promise<void>;
}

const finished: IteratorResult<ResearchEvent> = { done: true, value: undefined };

/**
 * The iterator a `for await` over a job gets: one event per `next()`, delivered as the job
 * delivers it (its `seq`, `status` and `toRef()` move with each event). While a network
 * read's events last, `next()` maps the next one at once (`fast`); opening and reading the
 * network, reconnects and the closing events go through the drive generator. A per-event
 * generator step (three nested generators before) was most of an iterated job's own cost.
 */
export class JobEvents implements AsyncIterableIterator<ResearchEvent> {
  readonly #source: JobEventsSource;
  #early: JobEventsSource["early"];
  /** Events the drive handed over together, delivered one per `next()`. */
  #buffer: readonly ResearchEvent[] = [];
  #at = 0;
  /** The buffer holds the early pull's events: each is marked delivered as it goes out. */
  #delivered: ((index: number) => void) | undefined;
  /** The early pull's failure, thrown once its events are delivered. */
  #failure: unknown;
  /** A drive step in flight: later calls wait for it, as an async generator queues them. */
  #busy: Promise<IteratorResult<ResearchEvent>> | undefined;
  #done = false;

  constructor(source: JobEventsSource) {
    this.#source = source;
    this.#early = source.early;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<ResearchEvent>> {
    if (this.#busy)
      return this.#busy.then(
        () => this.next(),
        () => this.next(),
      );
    if (this.#at < this.#buffer.length) {
      this.#delivered?.(this.#at);
      return Promise.resolve({ done: false, value: this.#buffer[this.#at++]! });
    }
    if (this.#done) return Promise.resolve(finished);
    if (!this.#early && this.#failure === undefined) {
      let event: ResearchEvent | undefined;
      try {
        event = this.#source.fast();
      } catch (error) {
        // Thrown where the parked drive would have thrown it.
        return this.#step(() => this.#source.drive.throw(error));
      }
      if (event) return Promise.resolve({ done: false, value: event });
    }
    return this.#step(() => this.#source.drive.next());
  }

  async return(): Promise<IteratorResult<ResearchEvent>> {
    await this.#busy?.catch(() => {});
    this.#done = true;
    this.#buffer = [];
    const early = this.#early;
    this.#early = undefined;
    await early?.pulled;
    this.#source.unpark();
    await this.#source.drive.return(undefined);
    await this.#source.closed();
    return finished;
  }

  #step(call: () => Promise<IteratorResult<ResearchEvent[]>>): Promise<IteratorResult<ResearchEvent>> {
    const step = this.#pull(call).then(
      (result) => {
        this.#busy = undefined;
        return result;
      },
      (error: unknown) => {
        this.#busy = undefined;
        this.#done = true;
        this.#source.failed(error);
        throw error;
      },
    );
    this.#busy = step;
    return step;
  }

  async #pull(call: () => Promise<IteratorResult<ResearchEvent[]>>): Promise<IteratorResult<ResearchEvent>> {
    const early = this.#early;
    if (early) {
      this.#early = undefined;
      this.#failure = await early.pulled;
      this.#buffer = early.events.splice(0);
      this.#at = 0;
      this.#delivered = early.delivered;
      if (this.#buffer.length > 0) {
        early.delivered(0);
        return { done: false, value: this.#buffer[this.#at++]! };
      }
    }
    if (this.#failure !== undefined) {
      const failure = this.#failure;
      // The drive stopped with it; a consumer's later return() must still close the drive.
      await this.#source.drive.return(undefined);
      throw failure;
    }
    this.#source.unpark();
    const result = await call();
    if (result.done) {
      this.#done = true;
      return finished;
    }
    this.#buffer = result.value;
    this.#at = 1;
    this.#delivered = undefined;
    return { done: false, value: result.value[0]! };
  }
}
