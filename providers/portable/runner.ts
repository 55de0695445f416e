/**
 * One runner per stored job per process: it owns the job's event log (persisted before
 * anyone sees an event), runs the loop while at least one connection follows it, and
 * applies cancellation. Connections follow the log from a cursor, so replay after an
 * attach and live delivery are the same code path. On a store with leases, the runner
 * first takes the job's lease: without it, it tails the holder's events from the store
 * and takes over (from the receipts, with the original deadline) once the lease lapses.
 */
import { JobNotFoundError, ProviderJobError, SondeError } from "../../src/errors.js";
import { isTerminal, type JobStatus } from "../../src/events.js";
import type { CancelOutcome, Logger } from "../../src/provider.js";
import { isLeaseLost, storeCall } from "./errors.js";
import { eventKey } from "./keys.js";
import { runLoop } from "./loop.js";
import { type Budget, defaultBudget, Operations } from "./operations.js";
import type { Slots } from "./slots.js";
import type {
  ChatModel,
  Fence,
  Fetcher,
  JobRecord,
  JobStore,
  Lease,
  SearchBackend,
  StoredEvent,
} from "./types.js";
import type { WireData } from "./wire/events.js";

/** What the runner needs to run the loop of one job. */
export interface Engine {
  chat: ChatModel;
  chatModel: string;
  search: SearchBackend | undefined;
  fetcher: Fetcher;
}

export interface RunnerOptions {
  store: JobStore;
  storeKey: string;
  jobId: string;
  clock: () => Date;
  logger: Logger;
  slots: Slots;
  engine: (record: JobRecord) => Engine;
  /** Lease duration; renewed every third of it. @defaultValue 15_000 */
  leaseMs?: number;
  /** How often a runner without the lease reads the store for new events. @defaultValue 200 */
  tailPollMs?: number;
}

/** Abort reasons of the loop's signal: halt (the process going away), cancel, lease lost. */
const PAUSE = Symbol("halt");
const CANCEL = Symbol("cancel");
const LOST = Symbol("lease lost");

export const DEFAULT_LEASE_MS = 15_000;

type LeasingStore = JobStore & Required<Pick<JobStore, "acquireLease" | "renewLease" | "releaseLease">>;

const hasLeases = (store: JobStore): store is LeasingStore =>
  typeof store.acquireLease === "function" &&
  typeof store.renewLease === "function" &&
  typeof store.releaseLease === "function";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });

export function budgetOf(record: JobRecord): Budget {
  return { ...defaultBudget, ...stripUndefined(record.request.budget ?? {}) };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const runners = new Map<string, JobRunner>();

/** The process-wide runner of a stored job (created on first use). */
export function runnerFor(options: RunnerOptions): JobRunner {
  const key = `${options.storeKey}\u0000${options.jobId}`;
  let runner = runners.get(key);
  if (!runner) {
    runner = new JobRunner(options, () => {
      if (runners.get(key) === runner) runners.delete(key);
    });
    runners.set(key, runner);
  }
  return runner;
}

/** The runner of a stored job if this process has one. */
export function existingRunner(storeKey: string, jobId: string): JobRunner | undefined {
  return runners.get(`${storeKey}\u0000${jobId}`);
}

/** Terminal status of a log, if it ended. */
export function terminalStatusOf(events: readonly StoredEvent[]): JobStatus | undefined {
  const last = events.at(-1)?.data as { type?: unknown; status?: JobStatus } | undefined;
  return last?.type === "status" && isTerminal(last.status) ? last.status : undefined;
}

export class JobRunner {
  readonly #options: RunnerOptions;
  readonly #onIdle: () => void;
  #record: JobRecord | undefined;
  #events: StoredEvent[] = [];
  #keys = new Set<string>();
  #loading: Promise<void> | undefined;
  #followers = 0;
  #run: Promise<void> | undefined;
  #controller: AbortController | undefined;
  #failure: SondeError | undefined;
  #halted = false;
  #listeners = new Set<() => void>();
  #emitting: Promise<void> = Promise.resolve();
  #writingRecord: Promise<void> = Promise.resolve();
  /** Identifies this runner as a lease holder. */
  readonly #holder = crypto.randomUUID();
  #fence: Fence | undefined;
  #keepLease = false;
  #repeatInterrupted = false;

  constructor(options: RunnerOptions, onIdle: () => void) {
    this.#options = options;
    this.#onIdle = onIdle;
  }

  get status(): JobStatus {
    return terminalStatusOf(this.#events) ?? this.#record?.status ?? "queued";
  }

  /** The research deadline, once a slot admitted the job (it counts from there). */
  get deadlineAt(): string | undefined {
    return this.#record?.deadlineAt;
  }

  /** Lets this runner send again the calls a previous runner left in flight (they may have been billed). */
  authorizeRepeats(): void {
    this.#repeatInterrupted = true;
  }

  /** Reads events other runners appended; true when the log grew. */
  async #refresh(withRecord: boolean): Promise<boolean> {
    const { store, jobId } = this.#options;
    const [record, stored] = await storeCall(() =>
      Promise.all([withRecord ? store.getJob(jobId) : undefined, store.readEvents(jobId)]),
    );
    if (record) this.#record = record;
    const events = stored.sort((a, b) => a.index - b.index);
    const hole = events.findIndex((e, i) => e.index !== i);
    if (hole >= 0) events.length = hole;
    if (events.length <= this.#events.length) return false;
    this.#events = events;
    this.#keys = new Set(events.map((e) => e.key));
    this.#notify();
    return true;
  }

  #load(): Promise<void> {
    this.#loading ??= (async () => {
      const { store, jobId } = this.#options;
      const [record, events] = await storeCall(() =>
        Promise.all([store.getJob(jobId), store.readEvents(jobId)]),
      );
      if (!record)
        throw new JobNotFoundError(`portable: no job ${jobId} in this store.`, { provider: "portable" });
      this.#record = record;
      this.#events = events.sort((a, b) => a.index - b.index);
      // A log is contiguous from 0; anything after a hole was never acknowledged.
      const hole = this.#events.findIndex((e, i) => e.index !== i);
      if (hole >= 0) this.#events.length = hole;
      this.#keys = new Set(this.#events.map((e) => e.key));
    })().catch((error: unknown) => {
      this.#loading = undefined;
      if (this.#followers === 0 && !this.#run) this.#onIdle();
      throw error;
    });
    return this.#loading;
  }

  /** Yields the log after `after` (an event index), then new events as the loop appends them. */
  async *follow(after: number, signal: AbortSignal): AsyncGenerator<StoredEvent> {
    await this.#load();
    this.#followers++;
    try {
      this.#ensureRunning();
      let next = after + 1;
      while (true) {
        if (signal.aborted) throw signal.reason;
        if (next < this.#events.length) {
          yield this.#events[next++]!;
          continue;
        }
        if (terminalStatusOf(this.#events)) return;
        if (!this.#run) {
          if (this.#failure) throw this.#failure;
          this.#ensureRunning();
        }
        await this.#changed(signal);
      }
    } finally {
      this.#followers--;
      // Nobody listening is not a reason to stop: like a remote job after abort(), the loop
      // runs on (bounded by its deadline) until it ends or is cancelled.
      if (this.#followers === 0 && !this.#run) this.#onIdle();
    }
  }

  /** Stores the cancellation intent, then stops local work; says honestly what happened. */
  async cancel(): Promise<CancelOutcome> {
    try {
      return await this.#cancel();
    } finally {
      if (this.#followers === 0 && !this.#run) this.#onIdle();
    }
  }

  async #cancel(): Promise<CancelOutcome> {
    await this.#load();
    const before = terminalStatusOf(this.#events);
    if (before) return { outcome: "already-terminal", finalStatus: before };
    await this.#updateRecord({ cancelRequestedAt: this.#options.clock().toISOString() }, false);
    if (!this.#run || !this.#fence) {
      // Another process may be running it (a shared store): it stops at its next call.
      // A job no process runs ends cancelled when it is next attached.
      return {
        outcome: "pending",
        detail:
          "The cancellation is stored. The process running this job stops it before its next call; a job no process is running ends cancelled when it is next attached.",
      };
    }
    this.#controller?.abort(CANCEL);
    await this.#run;
    const after = terminalStatusOf(this.#events);
    if (after === "cancelled") return { outcome: "cancelled", finalStatus: "cancelled" };
    if (after) {
      return {
        outcome: "already-terminal",
        finalStatus: after,
        detail: `The job finished (${after}) before the cancellation took effect.`,
      };
    }
    return {
      outcome: "pending",
      detail: "The cancellation is stored; the job ends cancelled when it is next attached.",
    };
  }

  #changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.#listeners.delete(done);
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#listeners.delete(done);
        reject(signal.reason);
      };
      this.#listeners.add(done);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #ensureRunning(): void {
    if (this.#run || this.#halted || terminalStatusOf(this.#events)) return;
    this.#failure = undefined;
    const controller = new AbortController();
    this.#controller = controller;
    this.#run = this.#execute(controller.signal).finally(() => {
      this.#run = undefined;
      this.#controller = undefined;
      this.#notify();
      if (this.#followers === 0) this.#onIdle();
    });
  }

  /** Appends an event unless its key is logged; it is visible only once it is durable. */
  #emit = (key: string, data: WireData): Promise<void> => {
    const step = this.#emitting.then(async () => {
      if (this.#keys.has(key)) return;
      const event: StoredEvent = {
        index: this.#events.length,
        key,
        data,
        at: this.#options.clock().toISOString(),
      };
      await storeCall(() => this.#options.store.appendEvent(this.#options.jobId, event, this.#fence));
      this.#events.push(event);
      this.#keys.add(key);
      this.#notify();
    });
    this.#emitting = step.catch(() => {});
    return step;
  };

  /** Read-modify-write of the stored record, so a field another process wrote is kept. */
  #updateRecord(patch: Partial<JobRecord>, fenced = true): Promise<void> {
    const { store, jobId } = this.#options;
    const step = this.#writingRecord.then(async () => {
      const current = (await storeCall(() => store.getJob(jobId))) ?? this.#record!;
      const record = { ...current, ...patch };
      const fence = fenced ? this.#fence : undefined;
      await storeCall(() => store.putJob(record, fence));
      this.#record = record;
    });
    this.#writingRecord = step.catch(() => {});
    return step;
  }

  async #finish(status: "completed" | "incomplete" | "cancelled"): Promise<void> {
    await this.#emit(eventKey.statusTerminal, { type: "status", status });
    const final = terminalStatusOf(this.#events);
    if (final) await this.#updateRecord({ status: final });
  }

  /**
   * Takes the job's lease (where the store has leases) and runs it; while another runner
   * holds it, tails that runner's events from the store, and takes over when it lapses.
   */
  async #execute(signal: AbortSignal): Promise<void> {
    const { store, jobId } = this.#options;
    if (!hasLeases(store)) return this.#hold(signal);
    const leaseMs = this.#options.leaseMs ?? DEFAULT_LEASE_MS;
    try {
      while (!terminalStatusOf(this.#events)) {
        const lease = await storeCall(() => store.acquireLease(jobId, this.#holder, leaseMs));
        if (lease) {
          // The previous holder may have got further than this runner has seen.
          await this.#refresh(true);
          if (terminalStatusOf(this.#events)) {
            await store.releaseLease(jobId, lease).catch(() => {});
            return;
          }
          const lost = await this.#withLease(lease, leaseMs, signal);
          if (!lost) return;
          continue;
        }
        // Nobody follows this runner any more: stop tailing; the next attach resumes.
        if (this.#followers === 0) return;
        await sleep(this.#options.tailPollMs ?? 200, signal);
        await this.#refresh(false);
      }
    } catch (error) {
      if (signal.aborted && (signal.reason === PAUSE || signal.reason === CANCEL)) return;
      this.#failure = asSondeError(error);
    }
  }

  /** Runs the job under `lease`, renewing it; true when the lease was lost to another runner. */
  async #withLease(lease: Lease, leaseMs: number, outer: AbortSignal): Promise<boolean> {
    const store = this.#options.store as LeasingStore;
    const { jobId, logger } = this.#options;
    const held = new AbortController();
    const forward = () => held.abort(outer.reason);
    outer.addEventListener("abort", forward, { once: true });
    if (outer.aborted) forward();
    this.#fence = { token: lease.token };
    let renewedAt = Date.now();
    const renew = setInterval(
      async () => {
        try {
          if (await store.renewLease(jobId, lease, leaseMs)) renewedAt = Date.now();
          else held.abort(LOST);
        } catch (error) {
          // A store hiccup is not a lost lease, unless it lasts until the lease has lapsed.
          logger.debug("portable: lease renewal failed", { jobId, error: (error as Error)?.message });
          if (Date.now() - renewedAt >= leaseMs) held.abort(LOST);
        }
      },
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    (renew as { unref?: () => void }).unref?.();
    const controller = this.#controller;
    // Cancel and halt reach the loop through `held`, which also stops on a lost lease.
    this.#controller = held;
    try {
      await this.#hold(held.signal);
      const lost = held.signal.reason === LOST || (this.#failure?.code === "lease_lost" && !outer.aborted);
      if (lost) {
        this.#failure = undefined;
        logger.debug("portable: another runner took the job over; tailing it", { jobId });
      }
      return lost;
    } finally {
      clearInterval(renew);
      outer.removeEventListener("abort", forward);
      this.#controller = controller;
      this.#fence = undefined;
      if (!this.#keepLease) await store.releaseLease(jobId, lease).catch(() => {});
    }
  }

  async #hold(signal: AbortSignal): Promise<void> {
    const { store, jobId, clock, logger } = this.#options;
    let release: (() => void) | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const record = this.#record!;
      if (record.cancelRequestedAt) {
        await this.#finish("cancelled");
        return;
      }
      release = await this.#options.slots.acquire(signal);
      const budget = budgetOf(record);
      // The deadline counts from the first admission and survives restarts.
      if (!record.deadlineAt) {
        const admitted = clock();
        await this.#updateRecord({
          status: "running",
          admittedAt: admitted.toISOString(),
          deadlineAt: new Date(admitted.getTime() + budget.deadlineMs).toISOString(),
        });
      }
      if (this.#record!.cancelRequestedAt) {
        await this.#finish("cancelled");
        return;
      }
      const deadlineAt = Date.parse(this.#record!.deadlineAt!);
      await this.#emit(eventKey.statusRunning, { type: "status", status: "running" });
      const deadline = new AbortController();
      timer = setTimeout(() => deadline.abort(), Math.max(0, deadlineAt - clock().getTime()));
      timer.unref?.();
      const receipts = new Map((await storeCall(() => store.readReceipts(jobId))).map((r) => [r.key, r]));
      const fence = this.#fence;
      const ops = new Operations({
        budget,
        receipts,
        save: (receipt) => store.putReceipt(jobId, receipt, fence),
        clock,
        deadlineAt,
        signal,
        deadline: deadline.signal,
        repeatInterrupted: this.#repeatInterrupted,
        checkCancelled: async () => {
          const stored = await storeCall(() => store.getJob(jobId));
          if (stored?.cancelRequestedAt && !signal.aborted) this.#controller?.abort(CANCEL);
          if (signal.aborted) throw signal.reason;
        },
      });
      const engine = this.#options.engine(this.#record!);
      const end = await runLoop({
        request: this.#record!.request,
        chatModel: engine.chatModel,
        chat: engine.chat,
        search: engine.search,
        fetcher: engine.fetcher,
        ops,
        budget,
        logger,
        emit: this.#emit,
      });
      await this.#finish(end);
    } catch (error) {
      if (signal.aborted && signal.reason === CANCEL) {
        await this.#finish("cancelled").catch((e: unknown) => {
          this.#failure = asSondeError(e);
        });
        return;
      }
      if (signal.aborted && (signal.reason === PAUSE || signal.reason === LOST)) return;
      if (isLeaseLost(error) || (SondeError.isInstance(error) && error.code === "lease_lost")) {
        this.#failure = asSondeError(error);
        return;
      }
      logger.debug("portable: the loop stopped with an error", { jobId, error: (error as Error)?.message });
      this.#failure = asSondeError(error);
    } finally {
      clearTimeout(timer);
      release?.();
    }
  }

  /**
   * Stops the loop in this process, as a restart would (in-flight calls abort, the log and
   * receipts stay), unless followers other than the caller's `own` still follow it. The next
   * follow, here or in another process, continues it from its receipts and original deadline.
   */
  async pause(own: number): Promise<void> {
    if (this.#followers > own) return;
    const run = this.#run;
    this.#controller?.abort(PAUSE);
    await run;
  }

  /**
   * @internal Stops the loop as a dying process would: in-flight calls abort, nothing more
   * is written. `keepLease` leaves the lease to lapse, as after a crash (SIGKILL); without
   * it the lease is given up, as a process shutting down cleanly does.
   */
  async halt(keepLease = false): Promise<void> {
    this.#halted = true;
    this.#keepLease = keepLease;
    const run = this.#run;
    this.#controller?.abort(PAUSE);
    await run;
    this.#failure = new ProviderJobError("halted", "portable: the process running this job stopped.", {
      provider: "portable",
    });
    this.#notify();
  }
}

function asSondeError(error: unknown): SondeError {
  if (SondeError.isInstance(error)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  return new ProviderJobError(
    "job_failed",
    `portable: the research loop stopped: ${detail}. Its progress up to here is saved; attach the job's ref to continue.`,
    { provider: "portable", providerCode: "portable_error", cause: error },
  );
}

/**
 * @internal Simulates this process exiting (tests of restarts): every running loop stops
 * where it is, leaving its store exactly as a crash would, and the runners are dropped.
 */
export async function simulateProcessExit(options: { keepLeases?: boolean } = {}): Promise<void> {
  const all = [...runners.values()];
  runners.clear();
  await Promise.all(all.map((runner) => runner.halt(options.keepLeases)));
}
