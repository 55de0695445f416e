import type { Pricing } from "../catalog/schema.js";
import { type ResearchResult, ResultAggregator } from "./aggregate.js";
import { emptyUsage, mergeUsage } from "./cost.js";
import {
  type AbortedJobState,
  ConnectionError,
  errorFromReport,
  JobAbortedError,
  JobNotCreatedError,
  MissingDependencyError,
  ProviderJobError,
  RateLimitError,
  SondeError,
  StreamConsumedError,
  StreamInterruptedError,
} from "./errors.js";
import {
  type Gap,
  isTerminal,
  type JobStatus,
  type ProviderName,
  type ResearchEvent,
  type Usage,
} from "./events.js";
import { JobEvents } from "./job-events.js";
import { type JobObserver, notify } from "./observe.js";
import type {
  CancelOutcome,
  EngineSession,
  Logger,
  MappedEvent,
  RetryPolicy,
  WireEvent,
} from "./provider.js";
import { redact, redactValue } from "./redact.js";
import type { JobRef } from "./ref.js";
import type { RefBinding } from "./ref-binding.js";
import { SeenCursors } from "./seen-cursors.js";
import type { CapCrossing, SpendMeter } from "./spend.js";
import { toTransportError, typedTransportError } from "./transport/http.js";
import type { SubmitRateLimit } from "./transport/rate-limit.js";
import { pollDelay, sleep, withRetry } from "./transport/retry.js";

export type { ResearchResult };

/** The abort reason of a job whose consumer stopped iterating before it ended. */
const CLOSED_BY_CONSUMER = "the event stream was closed by its consumer";

/** How many opaque cursors are remembered for dedup (overlap on resume is short). */
const RECENT_CURSORS = 1024;

/**
 * Pulls `iterator` so that an abort rejects the pending pull at once: an adapter that
 * ignores the signal must not keep an aborted job waiting. One abort listener per
 * connection, not per event; it rejects whichever pull is pending, and holds no step's
 * value once that step has settled.
 */
function abortablePuller<T>(iterator: AsyncIterator<T>, signal: AbortSignal) {
  let rejectPending: ((reason: unknown) => void) | undefined;
  const onAbort = () => rejectPending?.(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  let pending = false;
  return {
    /** A pull is in flight: the source's return() would wait for it. */
    get pending(): boolean {
      return pending;
    },
    next(): Promise<IteratorResult<T>> {
      if (signal.aborted) return Promise.reject(signal.reason);
      pending = true;
      const step = iterator.next();
      step.then(
        () => (pending = false),
        () => (pending = false),
      );
      return new Promise<IteratorResult<T>>((resolve, reject) => {
        rejectPending = reject;
        step.then(resolve, reject);
      });
    },
    release(): void {
      signal.removeEventListener("abort", onAbort);
      rejectPending = undefined;
    },
  };
}

function hasError(events: MappedEvent[]): boolean {
  for (const event of events) if (event.type === "error") return true;
  return false;
}

/** @internal What a job needs from the client (jobs are made by `client.research`). */
export interface JobInit {
  provider: ProviderName;
  /** Catalog id, `provider:model`. */
  model: string;
  pricing: Pricing;
  session: EngineSession;
  retry: RetryPolicy;
  logger: Logger;
  clock: () => Date;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Present when re-attaching: delivery resumes after its cursor. */
  ref?: JobRef;
  /**
   * The ref's credential and owner binding for this job id (see ref-binding.ts): computed
   * when the id becomes known, before `created` is delivered, so `toRef()` stays synchronous.
   * Usually at once; a promise when its hashing is not ready yet (the stream then waits).
   */
  bind?: (jobId: string) => RefBinding | Promise<RefBinding>;
  /** Attached jobs: checks the ref's credential tag; awaited before the first request. */
  verify?: () => Promise<void>;
  cancel: (ref: JobRef) => Promise<CancelOutcome>;
  /** The spend cap (`budget.maxCostUSD`): crossing it cancels the job and ends it `incomplete`. */
  maxCostUSD?: number | undefined;
  /** The model only polls, so a polled snapshot is not a fallback from streaming. */
  pollOnly?: boolean;
  /**
   * Builds the integration watching the job (tracing), called when the job first runs, is
   * cancelled or ends: a job that is never consumed opens no span it could never close.
   */
  observe?: (() => JobObserver | undefined) | undefined;
}

/** Reason used to stop the transport after a confirmed cancel (not an abort). */
class CancelledLocally {
  constructor(
    readonly outcome: CancelOutcome,
    /** Set when the spend cap stopped the job: it ends `incomplete` with this gap. */
    readonly cap?: Gap,
  ) {}
}

/** An open connection: its first new wire event, then the rest (`take` without an async step while a read lasts). */
interface OpenStream {
  first: WireEvent;
  next(): Promise<WireEvent | undefined>;
  take(): WireEvent | undefined;
  close(): Promise<void>;
}

/** Where a connection's mapping is: the last wire event's cursor, and a ref binding still being computed. */
interface ReadPosition {
  last: string | undefined;
  binding?: Promise<void> | undefined;
}

/**
 * Where an iterated connection's mapping is between two deliveries: the wire event being
 * delivered, its mapped events and the next one's index (`phase` "emit"), or the step after
 * it ("next": take the next wire event of the read, "map": map it). `wait` (a ref binding
 * being computed, with the `created` event it holds back) and `crossing` (the spend cap was
 * crossed) are what only the drive can handle; so is a read that is used up.
 */
interface Live {
  stream: OpenStream;
  position: ReadPosition;
  phase: "map" | "emit" | "next";
  wire: WireEvent;
  mapped: MappedEvent[];
  skip: number;
  index: number;
  wait?: { binding: Promise<void>; held: ResearchEvent } | undefined;
  crossing?: CapCrossing | undefined;
}

/** A connection's failure, with the cursor of the last wire event it delivered (to resume after). */
class Dropped {
  constructor(
    readonly error: unknown,
    readonly cursor: string | undefined,
  ) {}
}

interface Suppression {
  cursor: string;
  rank: number | undefined;
  /** Events of the wire event at `cursor` that were already delivered; undefined = all. */
  offset: number | undefined;
}

/**
 * One research job: an async iterable of `ResearchEvent`s (consumable once) plus its
 * ref, result and controls. The network starts lazily, on the first pull or on
 * `result()`. Delivery is exactly-once and in order across reconnects and `attach`.
 */
export class ResearchJob implements AsyncIterable<ResearchEvent> {
  readonly #init: JobInit;
  readonly #session: EngineSession;
  readonly #controller = new AbortController();
  readonly #aggregator = new ResultAggregator();
  #id: string | undefined;
  /** What `toRef()` writes for the credential and owner (see `JobInit.bind`). */
  #binding: RefBinding | undefined;
  /** The id arrived and its binding is being computed (`#id` is set when it is ready). */
  #identifying = false;
  #status: JobStatus = "queued";
  #createdAt: string | undefined;
  #deadlineAt: string | undefined;
  #seq = 0;
  /** Wire events mapped to something that moved the job on (see #mapWire), for `#drive`'s stall count. */
  #moved = 0;
  #usage: Usage = emptyUsage;
  #consumed = false;
  // The observer hears `end` once, whichever path ends the job object first.
  #endSent = false;
  #started = false;
  #terminal = false;
  /** The job itself is over: the provider reported a terminal status, or a cancel was confirmed. */
  #over = false;
  /** `cancel()` said `cancelled`: `status` says so at once, iterated or not (the events follow). */
  #cancelled = false;
  // Delivery position, for the ref.
  #refCursor: string | undefined;
  #refOffset: number | undefined;
  // Dedup state.
  #lastRank = Number.NEGATIVE_INFINITY;
  #seen = new SeenCursors(RECENT_CURSORS);
  #suppress: Suppression | undefined;
  #failure: SondeError | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #detach: () => void = () => {};
  /** The spend meter of a capped job, made before its first request (spend.js loads on first use). */
  #spend: SpendMeter | undefined;
  #spending: Promise<typeof import("./spend.js")> | undefined;
  #caps: typeof import("./spend.js") | undefined;
  /** Set when the job completes above its spend cap: the `cost-cap` gap it ends with. */
  #aboveCap: Gap | undefined;
  #observer: JobObserver | undefined;
  #observe: (() => JobObserver | undefined) | undefined;
  #pollFallback = false;
  readonly #result: Promise<ResearchResult>;
  // created(): the stream pulled up to `created`, kept for the first iteration (see #iterate).
  #whenCreated: Promise<string> | undefined;
  #onId: ((id: string) => void) | undefined;
  #early:
    | {
        events: ResearchEvent[];
        source: AsyncGenerator<ResearchEvent[]>;
        pulled: Promise<unknown>;
        delivered: (index: number) => void;
      }
    | undefined;
  #settle!: { resolve: (r: ResearchResult) => void; reject: (e: unknown) => void };
  /** An iterated connection whose drive is parked at a delivered event: the next ones can be mapped at once. */
  #parked: Live | undefined;

  constructor(init: JobInit) {
    this.#init = init;
    this.#session = init.session;
    if (init.maxCostUSD !== undefined) {
      this.#spending = import("./spend.js");
      this.#spending.catch(() => {}); // a job never run must not leave an unhandled rejection
    }
    this.#observe = init.observe;
    this.#result = new Promise<ResearchResult>((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    // Nobody awaiting result() is fine; don't let it surface as an unhandled rejection.
    this.#result.catch(() => {});
    if (init.ref) {
      this.#id = init.ref.jobId;
      this.#createdAt = init.ref.createdAt;
      // Until the job runs (and starts its own clock), its ref is the one it was attached from.
      this.#deadlineAt = init.ref.deadlineAt;
      // Until the job runs and re-binds the ref to this client, toRef() keeps the ref's own binding.
      const { credential, owner } = init.ref;
      this.#binding = { ...(credential && { credential }), ...(owner !== undefined && { owner }) };
      this.#refCursor = init.ref.cursor;
      this.#refOffset = init.ref.cursorOffset;
      if (init.ref.cursor !== undefined) {
        this.#suppress = {
          cursor: init.ref.cursor,
          rank: this.#session.cursorRank?.(init.ref.cursor),
          offset: init.ref.cursorOffset,
        };
      }
    }
    const signal = init.signal;
    if (signal) {
      if (signal.aborted) this.abort(signal.reason);
      else {
        // Removed when the job ends, so one long-lived signal shared by many jobs does not pin them.
        const onAbort = () => this.abort(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        this.#detach = () => signal.removeEventListener("abort", onAbort);
      }
    }
  }

  /** The provider's job id; undefined until the `created` event. */
  get id(): string | undefined {
    return this.#id;
  }

  /** Latest known status. */
  get status(): JobStatus {
    return this.#cancelled ? "cancelled" : this.#status;
  }

  /**
   * A plain-JSON ref to re-attach this job later (another process, after a restart).
   * Holds no secret. Throws `JobNotCreatedError` before the `created` event.
   */
  toRef(): JobRef {
    if (!this.#id || !this.#createdAt) throw new JobNotCreatedError();
    // An engine deadline (portable research budget) is the job's real end; else the local timeout.
    const deadlineAt = this.#session.deadlineAt?.() ?? this.#deadlineAt;
    return {
      v: 1,
      provider: this.#init.provider,
      model: this.#init.model,
      jobId: this.#id,
      ...(this.#refCursor !== undefined && { cursor: this.#refCursor }),
      ...(this.#refOffset !== undefined && { cursorOffset: this.#refOffset }),
      createdAt: this.#createdAt,
      ...(deadlineAt && { deadlineAt }),
      ...this.#binding,
      resume: this.#session.resumeState(),
    };
  }

  /**
   * The aggregated result. Drives the stream itself when nobody iterates; returns the
   * same promise every time. Resolves for `completed`, `incomplete` and `cancelled`;
   * rejects with the typed error for a failed or interrupted job (its `partial`
   * property holds what was received) and with `JobAbortedError` after abort/timeout.
   */
  result(): Promise<ResearchResult> {
    if (!this.#consumed) {
      // Let a `for await` that starts right after `result()` take the stream.
      setTimeout(() => {
        if (!this.#consumed) void this.#drain();
      }, 0);
    }
    return this.#result;
  }

  /**
   * Resolves with the job's id once the provider has created it (after which `toRef()`
   * works), without consuming the stream: a later `for await` still receives every event,
   * `created` included, exactly once. Starts the network if nothing else has. Rejects with
   * the typed error when the job fails before it exists (`JobNotCreatedError` if it ended
   * without an id, e.g. cancelled first). A ref taken right after it is the ref taken at
   * the `created` event.
   */
  created(): Promise<string> {
    this.#whenCreated ??= this.#waitForId();
    return this.#whenCreated;
  }

  #waitForId(): Promise<string> {
    if (this.#id) return Promise.resolve(this.#id);
    const id = new Promise<string>((resolve) => {
      this.#onId = resolve;
    });
    if (!this.#consumed) {
      const source = this.#drive();
      const events: ResearchEvent[] = [];
      // The ref's position after each event pulled: the ref moves back to it as the event is
      // delivered (an engine may send events before `created`, which the pull runs past).
      const positions: [string | undefined, number | undefined][] = [];
      const pull = async () => {
        while (!this.#id) {
          const step = await source.next();
          if (step.done) return;
          for (const event of step.value) {
            events.push(event);
            positions.push([this.#refCursor, this.#refOffset]);
          }
        }
      };
      // The drive settles the result itself; a throw it did not expect must not leave it (and
      // created()) pending until something iterates.
      const pulled = pull().catch((error: unknown) => {
        this.#settle.reject(error);
        return error;
      });
      const delivered = (index: number) => {
        [this.#refCursor, this.#refOffset] = positions[index]!;
      };
      this.#early = { events, source, pulled, delivered };
      this.#controller.signal.addEventListener("abort", () => this.#unreadAbort(), { once: true });
    }
    const ended = this.#result.then(
      () => Promise.reject(new JobNotCreatedError()),
      (error: unknown) => Promise.reject(error),
    );
    return Promise.race([id, ended]);
  }

  /**
   * An abort (or timeout) after created() while nobody iterates: the drive is parked after
   * `created` and would never see it, so the job object ends here, its observer's span too.
   * A later `for await` or result() meets the same abort error.
   */
  #unreadAbort(): void {
    const reason = this.#controller.signal.reason;
    if (this.#consumed || !JobAbortedError.isInstance(reason)) return;
    this.#settle.reject(reason);
    this.#ended("aborted", reason);
  }

  /** The events of the one consumption: what created() pulled first, then the rest of the same drive. */
  #iterate(): JobEvents {
    const early = this.#early;
    return new JobEvents({
      drive: early?.source ?? this.#drive(),
      early,
      fast: () => (this.#parked ? this.#advance(this.#parked) : undefined),
      unpark: () => {
        this.#parked = undefined;
      },
      // #drive settles the result itself; a throw it did not expect must not leave it pending.
      failed: (error) => this.#settle.reject(error),
      closed: () => this.#closedUnstarted(),
    });
  }

  /**
   * The consumer closed the iteration before its first pull: the drive never ran, so its
   * `finally` did not end the job. Run it on an aborted signal, which ends it before any
   * request (as a stop mid-stream does, or as the abort or cancel already made says).
   */
  async #closedUnstarted(): Promise<void> {
    if (this.#started) return;
    if (!this.#controller.signal.aborted)
      this.#controller.abort(this.#aborted("aborted", CLOSED_BY_CONSUMER));
    try {
      for await (const _ of this.#drive(true));
    } catch (error) {
      this.#settle.reject(error);
    }
  }

  /**
   * Tears down the local transport only. A remote job keeps running (and billing); a local
   * (portable) job keeps running in this process until it ends: `detach()` pauses it instead.
   */
  abort(reason?: unknown): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(this.#aborted("aborted", reason));
  }

  /**
   * Stops following the job and lets this process go. For a remote engine it is `abort()`:
   * the job keeps running server-side. For the portable engine the local job pauses (in-flight
   * calls abort, its progress stays in the job store) so nothing keeps the process alive;
   * attaching its ref, here or in another process, continues it from its receipts.
   */
  async detach(): Promise<void> {
    const local = this.#id !== undefined && this.#session.detach !== undefined;
    if (!this.#controller.signal.aborted)
      this.#controller.abort(this.#aborted("aborted", "detached", local ? "local-paused" : undefined));
    if (local) await this.#session.detach!();
  }

  /** The abort error, saying what is true of the job at this point. */
  #aborted(kind: "aborted" | "timeout", reason?: unknown, state?: AbortedJobState): JobAbortedError {
    const where: AbortedJobState =
      state ??
      (this.#id === undefined
        ? this.#started
          ? "unconfirmed"
          : "never-sent"
        : this.#session.local
          ? "local"
          : "remote");
    return new JobAbortedError(kind, reason, where);
  }

  /**
   * Stops the job server-side where the engine can, and says honestly what happened.
   * A completion that wins the race is reported as `already-terminal`.
   */
  async cancel(): Promise<CancelOutcome> {
    // A drop or a transport failure ends this object's stream, not the remote job: ask the provider.
    if (this.#over) return { outcome: "already-terminal", finalStatus: this.#status };
    if (!this.#id) {
      if (!this.#started) {
        // Nothing was sent: cancel is complete and local.
        this.#cancelled = true;
        this.#controller.abort(new CancelledLocally({ outcome: "cancelled", finalStatus: "cancelled" }));
        return { outcome: "cancelled", finalStatus: "cancelled" };
      }
      const outcome: CancelOutcome = {
        outcome: "transport-only",
        detail: "The job had no id yet; the submission was abandoned but may still have been accepted.",
      };
      this.#controller.abort(new CancelledLocally(outcome));
      return outcome;
    }
    const outcome = await this.#init.cancel(this.toRef());
    this.#watch();
    notify(this.#observer, { type: "cancel", by: "user", outcome });
    if (outcome.outcome === "already-terminal") return outcome;
    if (outcome.outcome === "cancelled") this.#cancelled = true;
    if (outcome.outcome === "cancelled" || outcome.outcome === "transport-only") {
      this.#controller.abort(new CancelledLocally(outcome));
    }
    return outcome;
  }

  [Symbol.asyncIterator](): AsyncIterator<ResearchEvent> {
    if (this.#consumed) throw new StreamConsumedError();
    this.#consumed = true;
    return this.#iterate();
  }

  async #drain(): Promise<void> {
    if (this.#consumed) return;
    this.#consumed = true;
    try {
      // result() aggregates; nothing to do per event. Without an early pull (created()), a
      // network read's events go out as one array.
      if (this.#early) for await (const _ of this.#iterate());
      else for await (const _ of this.#drive(true));
    } catch (error) {
      // #drive settles the result itself; a throw it did not expect must not leave it pending.
      this.#settle.reject(error);
    }
  }

  #startClock(): void {
    const now = this.#init.clock();
    this.#createdAt ??= now.toISOString();
    this.#deadlineAt = new Date(now.getTime() + this.#init.timeoutMs).toISOString();
    this.#timer = setTimeout(() => {
      if (!this.#controller.signal.aborted) this.#controller.abort(this.#aborted("timeout"));
    }, this.#init.timeoutMs);
    this.#timer.unref?.();
  }

  /**
   * Whether this wire event was delivered before: by rank when its cursor has one, else by
   * the remembered cursors: all of them (`true`), a snapshot of them that the events of this
   * pull are added to (a set), or none (`false`). Records it when it is new, and then
   * returns "new" for an opaque cursor.
   */
  #isDuplicate(wire: WireEvent, lookUp: boolean | Set<string>): boolean | "new" {
    const cursor = wire.cursor;
    if (cursor === undefined) return false;
    const rank = this.#session.cursorRank?.(cursor);
    if (rank !== undefined) {
      if (rank <= this.#lastRank) return true;
      this.#lastRank = rank;
      return false;
    }
    if (lookUp === true ? this.#seen.has(cursor) : lookUp !== false && lookUp.has(cursor)) return true;
    if (typeof lookUp === "object") lookUp.add(cursor);
    this.#seen.add(cursor);
    return "new";
  }

  /**
   * The events of one pull (a wire event or a batch of them) not seen before. A stream is
   * ordered, so what a resume repeats comes first: a connection's first pull (`first`) is
   * looked up event by event (a session may put something new, such as a notice of the
   * reconnection, before what it repeats); in a later one, once an event with an opaque
   * cursor is new, the rest of the pull is new too and its cursors are only recorded.
   */
  #fresh(pulled: WireEvent | readonly WireEvent[], first: boolean): readonly WireEvent[] {
    if (!Array.isArray(pulled))
      return this.#isDuplicate(pulled as WireEvent, true) === true ? [] : [pulled as WireEvent];
    const batch = pulled as readonly WireEvent[];
    let fresh: WireEvent[] | undefined;
    let lookUp: boolean | Set<string> = first ? this.#seen.snapshot() : true;
    for (let i = 0; i < batch.length; i++) {
      const seen = this.#isDuplicate(batch[i]!, lookUp);
      if (seen === "new" && lookUp === true) lookUp = false;
      const duplicate = seen === true;
      // Copy only once a duplicate shows up: a batch of new events is passed on as it is.
      if (duplicate && !fresh) fresh = batch.slice(0, i);
      else if (!duplicate && fresh) fresh.push(batch[i]!);
    }
    return fresh ?? batch;
  }

  /** How many leading events of this wire event were delivered before the ref was taken. */
  #suppressedCount(wire: WireEvent, total: number): number {
    const s = this.#suppress;
    if (!s) return 0;
    if (wire.cursor === undefined) {
      if (wire.snapshot) this.#suppress = undefined;
      return this.#suppress ? total : 0;
    }
    const rank = s.rank !== undefined ? this.#session.cursorRank?.(wire.cursor) : undefined;
    const same = rank !== undefined && s.rank !== undefined ? rank === s.rank : wire.cursor === s.cursor;
    // A snapshot with its own cursor (e.g. FINAL_CURSOR) is past any other position.
    const past =
      (rank !== undefined && s.rank !== undefined && rank > s.rank) || (wire.snapshot === true && !same);
    if (same) {
      this.#suppress = undefined;
      return Math.min(total, s.offset ?? total);
    }
    if (past) {
      this.#suppress = undefined;
      return 0;
    }
    return total;
  }

  /** The delivered event: one copy of the mapped one (an adapter may hand out its wire data or a mock's script). */
  #complete(mapped: MappedEvent, wire: WireEvent | undefined): ResearchEvent | undefined {
    if (wire !== undefined && mapped.rawEvent === undefined) {
      // The hot paths (a report's deltas and inline citations), in the generic path's shape
      // and key order, built at once.
      if (mapped.type === "text")
        return wire.cursor !== undefined
          ? { type: "text", delta: mapped.delta, seq: 0, cursor: wire.cursor, rawEvent: wire.data }
          : { type: "text", delta: mapped.delta, seq: 0, rawEvent: wire.data };
      if (mapped.type === "citation")
        return wire.cursor !== undefined
          ? { type: "citation", citation: mapped.citation, seq: 0, cursor: wire.cursor, rawEvent: wire.data }
          : { type: "citation", citation: mapped.citation, seq: 0, rawEvent: wire.data };
    }
    let event: ResearchEvent;
    if (mapped.type === "usage") {
      this.#usage = mergeUsage(this.#usage, mapped.usage, this.#init.pricing);
      event = { type: "usage", usage: this.#usage, seq: 0 };
      if (mapped.rawEvent !== undefined) event.rawEvent = mapped.rawEvent;
    } else {
      event = { ...mapped, seq: 0 } as ResearchEvent;
    }
    if (event.type === "created") {
      // Attached: the ref already carried it; or a repeat while the first one's binding is computed.
      if (this.#id || this.#identifying) return undefined;
    } else if (event.type === "status") {
      this.#status = event.status;
      if (isTerminal(event.status)) this.#terminal = this.#over = true;
    } else if (event.type === "error") {
      // Providers echo credentials in error bodies; scrub the one place they surface.
      event.error = { ...event.error, message: redact(event.error.message) };
    }
    if (wire) {
      if (wire.cursor !== undefined) event.cursor = wire.cursor;
      if (event.rawEvent === undefined) event.rawEvent = wire.data;
    }
    return event;
  }

  #number(event: ResearchEvent): ResearchEvent {
    event.seq = this.#seq++;
    this.#aggregator.add(event);
    this.#spend?.observe(event);
    if (this.#observer) notify(this.#observer, { type: "event", event });
    return event;
  }

  /**
   * Past the spend cap: ask the provider to cancel (once), then stop the stream so the job
   * ends `incomplete` with a `cost-cap` gap. A completion that won the race reads on, and a job
   * already over (crossed by its final figure) ends as it is: both complete with a `cost-cap`
   * gap before `done` that says the job went past the cap.
   */
  async #stopAtCap(crossing: CapCrossing): Promise<void> {
    const stop = await this.#caps!.stopAtCap(crossing, {
      over: this.#terminal,
      logger: this.#init.logger,
      cancel: this.#id ? () => this.#init.cancel(this.toRef()) : undefined,
      signal: this.#controller.signal,
      notify: (outcome) => notify(this.#observer, { type: "cancel", by: "cost-cap", outcome }),
    });
    if ("above" in stop) this.#aboveCap = stop.above;
    else this.#controller.abort(new CancelledLocally(stop.outcome, stop.gap));
  }

  /**
   * The events a wire event maps to; when it reports an error, every event it produced
   * carries the scrubbed payload as its `rawEvent` (an error body may echo credentials).
   */
  #mapWire(wire: WireEvent): MappedEvent[] {
    if (wire.snapshot === true && this.#observer && !this.#pollFallback && !this.#init.pollOnly) {
      this.#pollFallback = true;
      notify(this.#observer, { type: "poll-fallback" });
    }
    const mapped = this.#session.map(wire);
    // Progress for the reconnect budget: a new event at a cursor, not a cursorless one (which
    // a reconnection may repeat) nor an opaque notice that maps to nothing. A ranked cursor past
    // the last one is progress even when it maps to nothing (reasoning with thinking off).
    // Polled snapshots carry no cursor, and a poll-only session backs off between polls itself.
    if (
      mapped.length > 0
        ? wire.cursor !== undefined || this.#init.pollOnly
        : wire.cursor !== undefined && this.#session.cursorRank?.(wire.cursor) !== undefined
    )
      this.#moved++;
    if (hasError(mapped)) {
      const scrubbed = redactValue(wire.data);
      for (const event of mapped) event.rawEvent = scrubbed;
    }
    return mapped;
  }

  /**
   * Completes and numbers event `i` of a mapped wire event, moving the ref's position to
   * it; undefined when it is not delivered (before the ref's position, or a repeated `created`).
   * `bare`: nobody sees the events (result() alone, no observer or spend cap), so text,
   * citations and thinking are only counted, and the others are built without the wire's
   * cursor or rawEvent.
   */
  #emit(
    mapped: MappedEvent[],
    i: number,
    wire: WireEvent,
    skip: number,
    bare: boolean,
  ): ResearchEvent | undefined {
    const text = mapped[i]!;
    if (bare && (text.type === "text" || text.type === "citation" || text.type === "thinking")) {
      // Events #complete only copies: just what delivering one changes (seq, the ref's
      // position, the result), no event object, and a lazily built payload stays unbuilt.
      if (text.type === "text") this.#aggregator.addText(text.delta);
      else if (text.type === "citation") this.#aggregator.addCitation(text.citation);
      if (i < skip) return undefined;
      if (wire.cursor !== undefined) {
        this.#refCursor = wire.cursor;
        this.#refOffset = i + 1 < mapped.length ? i + 1 : undefined;
      }
      this.#seq++;
      return undefined;
    }
    const event = this.#complete(text, bare ? undefined : wire);
    if (!event) return undefined;
    if (i < skip) {
      this.#aggregator.add(event); // already delivered before the ref was taken
      this.#spend?.observe(event); // ...and already paid for
      return undefined;
    }
    if (wire.cursor !== undefined) {
      this.#refCursor = wire.cursor;
      this.#refOffset = i + 1 < mapped.length ? i + 1 : undefined;
    }
    return this.#number(event);
  }

  /**
   * One connection's events (see `#reads` and `#iterated`). Returns the cursor of the last
   * wire event seen; a failed network read is thrown as `Dropped` with that cursor (`#pull`).
   */
  async *#connection(
    stream: OpenStream,
    cursor: string | undefined,
    batched: boolean,
  ): AsyncGenerator<ResearchEvent[], string | undefined> {
    const position: ReadPosition = { last: cursor };
    if (batched) yield* this.#reads(stream, position);
    else yield* this.#iterated(stream, position);
    return position.last;
  }

  /**
   * The next network read. Only its failure is a drop to resume from: a read's events count as
   * seen once pulled, so a throw while mapping them, resumed, would skip the rest as repeats.
   */
  async #pull(stream: OpenStream, position: ReadPosition): Promise<WireEvent | undefined> {
    try {
      return await stream.next();
    } catch (error) {
      throw new Dropped(error, position.last);
    }
  }

  /**
   * `batched` (result() with nobody iterating): the events of one network read go out as one
   * array, mapped without an async step between them (nobody can observe the job mid-array).
   */
  async *#reads(stream: OpenStream, position: ReadPosition): AsyncGenerator<ResearchEvent[], void> {
    const signal = this.#controller.signal;
    const bare = this.#unwatched();
    let out: ResearchEvent[] = [];
    // A bare job's id is seen by nobody mid-read: its binding is awaited only before the end.
    let binding: Promise<void> | undefined;
    try {
      for (let wire: WireEvent | undefined = stream.first; wire; ) {
        const crossing = this.#mapRead(wire, stream, out, position, bare);
        // The job id arrived before its ref binding was ready (see #identify): wait for it here.
        if (position.binding && bare) binding = position.binding;
        else if (position.binding) await position.binding;
        position.binding = undefined;
        if (crossing) {
          if (out.length > 0) yield out;
          out = [];
          await this.#stopAtCap(crossing);
          if (signal.aborted) throw signal.reason;
        }
        if (this.#terminal) break;
        wire = stream.take();
        if (!wire) {
          if (out.length > 0) yield out;
          out = [];
          wire = await this.#pull(stream, position);
        }
      }
    } catch (error) {
      // Numbered events go out before the failure: no seq is skipped.
      if (out.length > 0) yield out;
      throw error;
    } finally {
      // The job ends with its id (and its ref) known.
      if (binding) await binding;
    }
    if (out.length > 0) yield out;
  }

  /**
   * Iterated: one event per array, each completed when it is pulled, so `status`, `id` and
   * `toRef()` move exactly as each event is delivered. The drive parks at each delivery, so
   * the job's iterator maps the next events of the same read itself (`#advance`) without
   * resuming this generator; what needs an async step comes back here.
   */
  async *#iterated(stream: OpenStream, position: ReadPosition): AsyncGenerator<ResearchEvent[], void> {
    const signal = this.#controller.signal;
    const live: Live = { stream, position, phase: "map", wire: stream.first, mapped: [], skip: 0, index: 0 };
    while (true) {
      let event = this.#advance(live);
      if (!event) {
        if (live.wait) {
          await live.wait.binding;
          event = live.wait.held;
          live.wait = undefined;
        } else if (live.crossing) {
          const crossing = live.crossing;
          live.crossing = undefined;
          await this.#stopAtCap(crossing);
          if (signal.aborted) throw signal.reason;
          continue;
        } else if (this.#terminal) {
          return;
        } else {
          const wire = await this.#pull(stream, position);
          if (!wire) return;
          live.wire = wire;
          live.phase = "map";
          continue;
        }
      }
      this.#parked = live;
      yield [event];
      this.#parked = undefined;
    }
  }

  /**
   * The next event of an iterated connection that can be delivered without an async step:
   * the rest of the wire event being delivered, then the next ones of the same network read.
   * Undefined when only the drive can go on (see `Live`); throws an abort as the drive would.
   */
  #advance(live: Live): ResearchEvent | undefined {
    if (live.wait || live.crossing) return undefined;
    while (true) {
      if (live.phase === "emit") {
        // Nothing after the terminal status is delivered (the adapter spec): not even the rest of its wire event.
        while (live.index < live.mapped.length && !this.#terminal) {
          const event = this.#emit(live.mapped, live.index++, live.wire, live.skip, false);
          if (!event) continue;
          if (event.type === "created") {
            const binding = this.#identify(event.jobId);
            if (binding) {
              live.wait = { binding, held: event };
              return undefined;
            }
          }
          return event;
        }
        if (live.wire.cursor !== undefined) live.position.last = live.wire.cursor;
        live.phase = "next";
        live.crossing = this.#spend?.crossing();
        if (live.crossing) return undefined;
      }
      if (live.phase === "next") {
        if (this.#terminal) return undefined;
        const wire = live.stream.take();
        if (!wire) return undefined;
        live.wire = wire;
      }
      const signal = this.#controller.signal;
      if (signal.aborted) throw signal.reason;
      live.mapped = this.#mapWire(live.wire);
      live.skip = this.#suppressedCount(live.wire, live.mapped.length);
      live.index = 0;
      live.phase = "emit";
    }
  }

  /** No observer or spend cap reads the events (with result() alone, nobody does). */
  #unwatched(): boolean {
    return this.#observer === undefined && this.#spend === undefined;
  }

  /**
   * The batched path of `#connection`: maps `wire` and the rest of its network read onto
   * `out`, with no async step (a plain loop, so it is optimized early in a run, where a loop
   * inside an async generator is not). Stops after the terminal event, after an event that
   * crosses the spend cap (returned), or (unless `bare`) at `created` whose ref binding is
   * still being computed, with `position.last` at the last wire event mapped.
   */
  #mapRead(
    wire: WireEvent,
    stream: OpenStream,
    out: ResearchEvent[],
    position: ReadPosition,
    bare: boolean,
  ): CapCrossing | undefined {
    const signal = this.#controller.signal;
    for (let next: WireEvent | undefined = wire; next; ) {
      if (signal.aborted) throw signal.reason;
      const mapped = this.#mapWire(next);
      const skip = this.#suppressedCount(next, mapped.length);
      for (let i = 0; i < mapped.length && !this.#terminal; i++) {
        const event = this.#emit(mapped, i, next, skip, bare);
        if (!event) continue;
        if (event.type === "created") position.binding = this.#identify(event.jobId);
        out.push(event);
      }
      if (next.cursor !== undefined) position.last = next.cursor;
      const crossing = this.#spend?.crossing();
      if (crossing || this.#terminal || (position.binding && !bare)) return crossing;
      next = stream.take();
    }
    return undefined;
  }

  /** The job has its id: bind its ref (hashing is async), then let `id`, `toRef()` and `created()` see it. */
  #identify(jobId: string): Promise<void> | undefined {
    const binding = this.#init.bind?.(jobId);
    if (binding instanceof Promise) {
      this.#identifying = true;
      return binding.then((bound) => this.#identified(jobId, bound));
    }
    this.#identified(jobId, binding);
    return undefined;
  }

  #identified(jobId: string, binding: RefBinding | undefined): void {
    this.#identifying = false;
    this.#binding = binding;
    this.#id = jobId;
    this.#onId?.(jobId);
  }

  /**
   * An attached job, before its first request: refuse a ref whose credential tag is not this
   * client's, and re-bind it to this client's key (after a rotation) and owner.
   */
  async #verifyRef(jobId: string): Promise<void> {
    try {
      await this.#init.verify?.();
      if (this.#init.bind) this.#binding = await this.#init.bind(jobId);
      await this.#meter();
    } catch (error) {
      this.#detach();
      this.#settle.reject(error);
      throw error;
    }
  }

  /** A capped job's spend meter, before its first request. */
  async #meter(): Promise<void> {
    if (!this.#spending || this.#caps) return;
    this.#caps = await this.#spending;
    this.#spend = new this.#caps.SpendMeter(this.#init.maxCostUSD!, this.#init.pricing);
  }

  async *#drive(batched = false): AsyncGenerator<ResearchEvent[]> {
    this.#started = true;
    if (this.#init.ref) await this.#verifyRef(this.#init.ref.jobId);
    else if (this.#spending) await this.#meter();
    this.#watch();
    this.#startClock();
    const signal = this.#controller.signal;
    let finalStatus: JobStatus | undefined;
    // The closing events (a failure or cancel report, then `done`) are numbered and the result
    // settled before any of them is yielded: a consumer that stops at one of them (`break` on
    // `done` or `error`) must not leave `result()` pending forever.
    const tail: ResearchEvent[] = [];
    try {
      // After an attach, replay from the start (so offsets and the result are whole) and
      // suppress delivery up to the ref's position.
      let cursor: string | undefined = this.#suppress ? undefined : this.#init.ref?.cursor;
      let opened = false;
      // Nobody sees the events one by one: sessions may join text deltas.
      const coalesce = batched && this.#unwatched();
      // Reconnections in a row that got nowhere (see #moved): each counts against the retry
      // budget and waits its backoff, as a failed connect does. Else a server that answers each
      // reconnection with only repeats, cursorless events or notices, then drops or ends, would
      // be reconnected to at once, again and again, until the job's timeout.
      let stalls = 0;
      while (!this.#terminal) {
        const stream = await this.#open(cursor, signal, coalesce);
        if (opened) notify(this.#observer, { type: "resume", cursor });
        opened = true;
        const moved = this.#moved;
        let error: Error | undefined;
        try {
          cursor = yield* this.#connection(stream, cursor, batched);
        } catch (thrown) {
          // Anything but a dropped read (a throw while mapping, an abort) ends the job.
          if (!(thrown instanceof Dropped)) throw thrown;
          error = thrown.error as Error;
          cursor = thrown.cursor;
          if (signal.aborted || !this.#canReconnect(error)) throw error;
        } finally {
          await stream.close();
        }
        if (this.#terminal) break;
        if (!error && !this.#session.resumable) {
          throw new StreamInterruptedError(
            `${this.#init.provider}: the stream ended before the job finished, and this engine cannot resume. ` +
              "Nothing was resent; result() holds what arrived.",
            { provider: this.#init.provider, retryable: false },
          );
        }
        const reason = error?.message ?? "the stream ended early";
        stalls = this.#moved > moved ? 0 : stalls + 1;
        if (stalls > this.#init.retry.attempts) {
          throw (
            error ??
            new StreamInterruptedError(
              `${this.#init.provider}: the stream ended early ${stalls} times in a row without anything new. Attach the job's ref later to continue.`,
              { provider: this.#init.provider },
            )
          );
        }
        this.#init.logger.debug("stream ended; resuming", { cursor, stalls, error: reason });
        notify(this.#observer, { type: "reconnect", error: redact(reason) });
        // After progress: reopen from the cursor at once, with a fresh retry budget.
        if (stalls > 0) await sleep(pollDelay(stalls - 1, this.#init.retry), signal);
      }
      finalStatus = this.#status;
      if (this.#aboveCap) tail.push(this.#number({ type: "gap", gap: this.#aboveCap, seq: 0 }));
    } catch (thrown) {
      finalStatus = this.#ending(thrown, tail);
    } finally {
      clearTimeout(this.#timer);
      this.#detach();
      if (finalStatus === undefined && !this.#controller.signal.aborted) {
        if (this.#terminal) {
          // The consumer stopped after the terminal status: the job is over, not detached.
          this.#noteAboveCap();
          this.#settleResult(this.#status);
        } else {
          // The consumer stopped iterating: tear down the transport, leave the job attachable.
          this.#controller.abort(this.#aborted("aborted", CLOSED_BY_CONSUMER));
          this.#settle.reject(this.#controller.signal.reason);
          this.#ended("aborted", this.#controller.signal.reason as Error);
        }
      }
    }
    const status = isTerminal(finalStatus) ? finalStatus : "incomplete";
    tail.push(this.#number({ type: "done", status, seq: 0 }));
    this.#terminal = true;
    this.#settleResult(status);
    if (batched) yield tail;
    else for (const event of tail) yield [event];
  }

  /**
   * For a consumer that stopped at the terminal status, before the cap check after it ran: the
   * result still says, with its `cost-cap` gap, that the job completed above its cap.
   */
  #noteAboveCap(): void {
    const crossing = this.#spend?.crossing();
    if (crossing) this.#aboveCap = this.#caps!.endedAboveCap(crossing, this.#init.logger);
    if (this.#aboveCap) this.#number({ type: "gap", gap: this.#aboveCap, seq: 0 });
  }

  /**
   * What the job's stream ends with after `thrown`: the closing events it owes (pushed to
   * `tail`, numbered) and its final status. Rethrows an abort, which ends the job without them.
   */
  #ending(thrown: unknown, tail: ResearchEvent[]): JobStatus {
    const signal = this.#controller.signal;
    const reason = signal.aborted ? signal.reason : undefined;
    if (reason instanceof CancelledLocally) {
      // Stopped at the spend cap, the job is incomplete (its partial report kept), not cancelled.
      const finalStatus: JobStatus = reason.cap ? "incomplete" : "cancelled";
      this.#over = reason.outcome.outcome === "cancelled";
      const charged = reason.outcome.usage;
      const final = reason.cap
        ? this.#spend?.finalUsage(charged)
        : charged?.costSource === "provider"
          ? // The provider's charge for the cancelled job (work already done) is the job's cost.
            { ...this.#usage, costUSD: charged.costUSD, costSource: "provider" as const }
          : undefined;
      if (final) {
        this.#usage = final;
        tail.push(this.#number({ type: "usage", usage: final, seq: 0 }));
      }
      if (reason.cap) tail.push(this.#number({ type: "gap", gap: reason.cap, seq: 0 }));
      if (this.#status !== finalStatus)
        tail.push(this.#number({ type: "status", status: finalStatus, seq: 0 }));
      this.#status = finalStatus;
      return finalStatus;
    }
    if (reason && JobAbortedError.isInstance(reason)) {
      this.#settle.reject(reason);
      this.#ended("aborted", reason);
      throw reason;
    }
    const error = toTransportError(thrown, this.#init.provider, signal);
    this.#failure = error;
    // A refused reconnect to a job that exists, or its engine's code failing to load (an
    // attached job), leaves it running, as a lost stream does.
    const interrupted =
      StreamInterruptedError.isInstance(error) ||
      ((ConnectionError.isInstance(error) || MissingDependencyError.isInstance(error)) &&
        this.#id !== undefined);
    const finalStatus: JobStatus = interrupted ? "incomplete" : "failed";
    tail.push(
      this.#number({
        type: "error",
        seq: 0,
        error: {
          code: error.code,
          message: error.message,
          // Worth retrying only if attaching the ref later can continue the job.
          retryable: interrupted
            ? this.#session.resumable && this.#id !== undefined
            : (error as SondeError).retryable,
          ...(error.status !== undefined && { status: error.status }),
        },
      }),
    );
    this.#status = finalStatus;
    return finalStatus;
  }

  #settleResult(status: JobStatus): void {
    const result = this.#aggregator.result();
    result.status = status;
    result.jobId = this.#id;
    if (status === "failed" || this.#failure) {
      const reported = result.errors.at(-1);
      const error =
        this.#failure ??
        (reported
          ? errorFromReport(this.#init.provider, reported)
          : new ProviderJobError("job_failed", `The ${this.#init.provider} job failed.`, {
              provider: this.#init.provider,
            }));
      (error as SondeError & { partial?: ResearchResult }).partial = result;
      this.#settle.reject(error);
      this.#ended(status, error);
    } else {
      this.#settle.resolve(result);
      this.#ended(status);
    }
  }

  /** Builds the observer once, the first time the job runs or settles (see `JobInit.observe`). */
  #watch(): void {
    const observe = this.#observe;
    if (observe === undefined) return;
    this.#observe = undefined;
    this.#observer = observe();
  }

  #ended(status: JobStatus | "aborted", error?: Error): void {
    if (this.#endSent) return;
    this.#endSent = true;
    this.#watch();
    notify(this.#observer, { type: "end", status, usage: this.#usage, ...(error && { error }) });
  }

  #canReconnect(error: unknown): boolean {
    return (
      SondeError.isInstance(error) &&
      error.retryable &&
      this.#session.resumable &&
      this.#session.jobId !== undefined
    );
  }

  /**
   * Opens the wire under the retry policy and pulls until the first new (non-duplicate)
   * event, so that a connection that fails before making progress consumes a retry and
   * one that made progress starts a fresh budget.
   */
  async #open(cursor: string | undefined, signal: AbortSignal, coalesce: boolean): Promise<OpenStream> {
    const session = this.#session;
    // The pre-job 429 rules, loaded with the first 429 (a cold path).
    let rateLimit: SubmitRateLimit | undefined;
    const beforeJob = () => session.jobId === undefined;
    return withRetry(
      async () => {
        const iterator = session
          .connect({ cursor, signal, ...(coalesce && { coalesce }) })
          [Symbol.asyncIterator]();
        const puller = abortablePuller(iterator, signal);
        // With no pull in flight, return() settles at once: awaiting it releases the
        // connection (the body is cancelled) before the job settles, so a caller tearing
        // down right after result() never races it (msw + undici crash on that race).
        // With one in flight it is not awaited: return() waits for that pending next(),
        // which an adapter ignoring the signal might never settle.
        const close = async () => {
          puller.release();
          const returned = iterator.return?.().catch(() => {});
          if (!puller.pending) await returned;
        };
        // The rest of the last pull's batch: taken without an async step (one per network read).
        let batch: readonly WireEvent[] = [];
        let at = 0;
        let pulls = 0;
        const take = (): WireEvent | undefined => (at < batch.length ? batch[at++] : undefined);
        const next = async (): Promise<WireEvent | undefined> => {
          const buffered = take();
          if (buffered) return buffered;
          try {
            while (true) {
              const step = await puller.next();
              if (step.done) return undefined;
              // The connection's first read is its first non-empty one (an empty array reads nothing).
              const fresh = this.#fresh(step.value, pulls === 0);
              if ((step.value as readonly unknown[]).length !== 0) pulls++;
              if (fresh.length > 0) {
                batch = fresh;
                at = 1;
                return fresh[0];
              }
            }
          } catch (error) {
            // A connection never made (an attach refused) is a ConnectionError, not a drop.
            throw await typedTransportError(error, this.#init.provider, signal);
          }
        };
        let first: WireEvent | undefined;
        try {
          first = await next();
        } catch (error) {
          await close();
          if (!beforeJob() || !RateLimitError.isInstance(error)) throw error;
          const { SubmitRateLimit } = await import("./transport/rate-limit.js");
          rateLimit ??= new SubmitRateLimit(this.#init.retry, this.#init.logger);
          throw rateLimit.review(error);
        }
        if (!first) {
          await close();
          throw new StreamInterruptedError(`${this.#init.provider}: the stream closed without new events`, {
            provider: this.#init.provider,
            retryable: session.resumable,
          });
        }
        return { first, next, take, close };
      },
      {
        policy: this.#init.retry,
        signal,
        // Before the job exists, only errors that prove the submit was refused are retryable;
        // after, only engines that can resume reconnect.
        // A 429 before the job exists is resent at most once, after a bounded wait (SubmitRateLimit).
        shouldRetry: (error) =>
          SondeError.isInstance(error) &&
          error.retryable &&
          (beforeJob()
            ? !RateLimitError.isInstance(error) || rateLimit?.mayResend(error) === true
            : session.resumable),
        onRetry: (error, attempt, delayMs) => {
          if (beforeJob() && RateLimitError.isInstance(error)) rateLimit?.resending(error, delayMs);
          else this.#init.logger.debug("reconnecting", { attempt, delayMs, error: (error as Error).message });
          notify(this.#observer, {
            type: "retry",
            attempt,
            delayMs,
            error: redact((error as Error).message),
          });
        },
      },
    ).catch((error: unknown) => {
      throw signal.aborted ? signal.reason : error;
    });
  }
}
