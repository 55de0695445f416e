/** At most `max` requests in flight per host, so parallel branches never hammer one site. */
export class HostLimiter {
  #active = new Map<string, number>();
  #waiting = new Map<string, (() => void)[]>();

  constructor(readonly max: number) {}

  async run<T>(host: string, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    await this.#acquire(host, signal);
    try {
      return await task();
    } finally {
      this.#release(host);
    }
  }

  /** Requests in flight for `host` now. */
  active(host: string): number {
    return this.#active.get(host) ?? 0;
  }

  #acquire(host: string, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.active(host) < this.max) {
      this.#active.set(host, this.active(host) + 1);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const queue = this.#waiting.get(host) ?? [];
      this.#waiting.set(host, queue);
      const admit = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        queue.splice(queue.indexOf(admit), 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      queue.push(admit);
    });
  }

  #release(host: string): void {
    const next = this.#waiting.get(host)?.shift();
    // The slot passes straight to the next waiter.
    if (next) {
      next();
      return;
    }
    const left = this.active(host) - 1;
    if (left > 0) this.#active.set(host, left);
    else {
      this.#active.delete(host);
      this.#waiting.delete(host);
    }
  }
}
