/** In-process execution slots: at most `size` jobs run at once, the rest wait in order. */
export class Slots {
  #free: number;
  readonly #queue: { grant: () => void; signal: AbortSignal }[] = [];

  constructor(readonly size: number) {
    this.#free = size;
  }

  /** Resolves with a release function once a slot is free; rejects with the signal's reason. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const release = once(() => this.#release());
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const entry = {
        signal,
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const index = this.#queue.indexOf(entry);
        if (index >= 0) this.#queue.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(entry);
    });
  }

  #release(): void {
    const next = this.#queue.shift();
    if (next) next.grant();
    else this.#free++;
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
