/// <reference path="../redis/lua.d.ts" />
/**
 * One run of a research job by a worker: take the engine's fleet slot, attach from the
 * stored ref (never submit twice) or submit once, drive the job while its events are written
 * to its stream (with the ref, in one atomic step per write), and record how the run ended:
 * finished, waiting for its next wake, deferred, or indeterminate.
 */
import type { Queue } from "bullmq";
import type { ChainableCommander, Redis } from "ioredis";
import type { SondeClient } from "../client.js";
import {
  IndeterminateSubmissionError,
  InvalidRefError,
  JobAbortedError,
  ModelRetiredError,
  SondeError,
  UnknownModelError,
  UnsupportedOptionError,
} from "../errors.js";
import type { ResearchEvent } from "../events.js";
import type { ResearchJob } from "../job.js";
import type { CancelOutcome } from "../provider.js";
import { appendRetrying, batchArgs, type EventLog, eventsOf } from "../redis/events.js";
import { luaScript, withAppendBatch } from "../redis/scripts.js";
import type { ResearchRequest } from "../request.js";
import acquireSlotSource from "./commands/acquire-slot.lua";
import finishRunSource from "./commands/finish-run.lua";
import writeEventsSource from "./commands/write-events.lua";
import { keptFor, reruns, wakeJobId } from "./queue.js";
import {
  DAY_MS,
  ENDED_TTL_MS,
  FINAL_STATUSES,
  isSettled,
  markEnded,
  readState,
  STATE_FIELDS,
  stateKeys,
  type WorkerJobState,
  type WorkerJobStatus,
  withFinalStatuses,
} from "./state.js";
import { type Batch, EventWriter } from "./writer.js";

const acquireSlot = luaScript(acquireSlotSource);
const writeEvents = luaScript(withFinalStatuses(withAppendBatch(writeEventsSource)));
const finishRun = luaScript(withFinalStatuses(withAppendBatch(finishRunSource)));

/**
 * What a run that begins at or past its job's deadline gets instead of nothing: time for one
 * read of the job (a resumed or taken-over job may have finished meanwhile), with no hold.
 */
const LAST_READ_MS = 5_000;

/**
 * A write refused because the job is over: another run ended it after this run's lock lapsed
 * (a stalled process, a partition) and BullMQ gave the job to another worker. This run stops
 * without writing anything more; the job's events, status and result are the other run's.
 */
class EndedElsewhere extends Error {
  constructor(id: string) {
    super(
      `job ${id} was ended by another run while this one still held it (its lock lapsed): this run stops, writing nothing more`,
    );
    this.name = "EndedElsewhere";
  }
}

/** Consecutive retryable failures after which a job is deferred. */
export const MAX_RETRYABLE_FAILURES = 5;

/** What every run of one worker shares. */
export interface RunContext {
  redis: Redis;
  client: SondeClient;
  prefix: string;
  events: EventLog;
  wakes: Queue;
  limits: Partial<Record<string, number>>;
  backoff: { minMs: number; maxMs: number };
  resultTtlMs: number;
  holdMs: number;
  cancelPollMs: number;
  /** A job's events are written at most once per this interval (ms). */
  eventBatchMs: number;
  indeterminateSlotMs: number | undefined;
  repeatInterruptedCalls: boolean;
  /** BullMQ attempts of each wake entry (queue.ts, `reruns`). */
  attempts: number;
}

/** The reason a poll-only job's run gives its slot back. */
class Hold {
  readonly reason = "hold";
}

type Resolved = ReturnType<SondeClient["research"]["validate"]>;

/** What the job's stream held when the run began. */
export interface StoredSoFar {
  /** Events stored: the next event's seq. */
  count: number;
  /** The last one was `done`. */
  done: boolean;
}

/** What a stream holds, from its last entry (as XREVRANGE gives it; none: an empty stream). */
export function storedSoFar(last: [string, string[]] | undefined): StoredSoFar {
  return {
    // The last entry's id is 0-<its last seq + 1>: the next event's seq.
    count: last ? Number(last[0].split("-")[1]) : 0,
    done: last !== undefined && eventsOf(last[1]).at(-1)?.type === "done",
  };
}

/** The job's `done` event (its stored JSON, numbered `seq`), stored with its result in one step. */
interface FinalEvent {
  seq: number;
  text: string;
  ref: unknown;
}

/**
 * An error that proves the job can never run as queued, whichever worker takes it: the catalog
 * refused its request (a model retired since it was queued, a model it no longer has, an
 * option the model or engine does not take), or its stored ref is not one. Not what a worker's
 * own setup lacks (an API key, a base URL, a portable chat endpoint: `authentication` or a
 * plain `invalid_request`; an engine left out of its client): another worker, or this one once
 * set up, can run the job, so BullMQ runs it again.
 */
export const refusal = (error: unknown): error is SondeError =>
  ModelRetiredError.isInstance(error) ||
  UnknownModelError.isInstance(error) ||
  (UnsupportedOptionError.isInstance(error) && error.option !== "model") ||
  InvalidRefError.isInstance(error);

/**
 * The `error` and `done` events of a job that failed with `error`, stored after what its stream
 * holds; none if that ends with `done` already.
 */
function failureEvents(
  error: { code: string; message: string; status?: number | undefined },
  stored: StoredSoFar,
): { rest?: Batch; final?: FinalEvent } {
  if (stored.done) return {};
  const seq = stored.count;
  const reported = {
    type: "error",
    seq,
    error: {
      code: error.code,
      message: error.message,
      retryable: false,
      ...(error.status !== undefined && { status: error.status }),
    },
  };
  return {
    rest: { joined: JSON.stringify(reported), count: 1, first: seq, ref: undefined },
    final: {
      seq: seq + 1,
      text: JSON.stringify({ type: "done", seq: seq + 1, status: "failed" }),
      ref: undefined,
    },
  };
}

/** What the state keeps of an error. */
const errorOf = (error: SondeError) => ({ code: error.code, message: error.message });

/**
 * The atomic end of a job (finish-run.lua): the events not written yet (`rest`, then `final`,
 * its `done`), the result, the status and error, the `ended` entry that wakes waiters and,
 * with `slots`, the job's place in its engine's fleet slots given back.
 */
async function storeEnd(
  ctx: RunContext,
  id: string,
  slots: string | undefined,
  status: WorkerJobStatus,
  result?: unknown,
  error?: { code: string; message: string },
  final?: FinalEvent,
  rest?: Batch,
): Promise<WorkerJobStatus> {
  const { redis, resultTtlMs, events } = ctx;
  const keys = events.keys(id);
  const own = stateKeys(ctx.prefix, id);
  const joined = rest ? (final ? `${rest.joined},${final.text}` : rest.joined) : (final?.text ?? "");
  const count = (rest?.count ?? 0) + (final ? 1 : 0);
  const ref = final ? final.ref : rest?.ref;
  const keyList = [keys.events, keys.state, own.result, own.ended];
  if (slots !== undefined) keyList.push(slots);
  const fixed = [
    status,
    error ? JSON.stringify(error) : "",
    result === undefined ? "" : JSON.stringify(result),
    resultTtlMs,
    ENDED_TTL_MS,
    id,
    ...STATE_FIELDS,
  ];
  const [added] = await appendRetrying(joined, count, rest?.first ?? final?.seq ?? 0, (batch) =>
    finishRun(redis, keyList, [events.ttlMs, refText(ref), ...batchArgs(batch), ...fixed]),
  );
  if (added === -2) throw new EndedElsewhere(id);
  return status;
}

/** The engine of a job's catalog id, and its fleet slots' key if the engine has a limit. */
function engineOf(ctx: RunContext, state: WorkerJobState) {
  const engine = state.model.split(":")[0]!;
  const slots = ctx.limits[engine] !== undefined ? stateKeys(ctx.prefix, state.id).slots(engine) : undefined;
  return { engine, slots };
}

/**
 * Ends, once, a job whose request no longer validates when a run begins (e.g. its model was
 * retired after it was queued): `failed` with the typed error, an `error` and a `done` event
 * after whatever its stream holds (so tails end), and its engine's fleet slot given back.
 * Nothing is sent. The run's mark of a submission (begin-run.lua), if any, is taken back first.
 */
export async function endRefused(
  ctx: RunContext,
  state: WorkerJobState,
  stored: StoredSoFar,
  error: SondeError,
  marked: boolean,
): Promise<WorkerJobStatus> {
  if (marked) await ctx.redis.hdel(stateKeys(ctx.prefix, state.id).state, "submittingAt");
  const { slots } = engineOf(ctx, state);
  const { rest, final } = failureEvents(error, stored);
  return storeEnd(ctx, state.id, slots, "failed", undefined, errorOf(error), final, rest);
}

/** Takes back a mark of a submission that was not sent after all (the status it had before). */
export function unmark(redis: Redis, key: string, status: string) {
  return redis.multi().hdel(key, "submittingAt").hset(key, { status }).exec();
}

/**
 * When the fleet slot of a job no longer followed but maybe still running at the provider
 * (indeterminate, deferred) lapses: once a run submitted at `since` (ms) would be over, the
 * model's longest run later (`indeterminateSlotMs`, if set). A model this worker's client does
 * not know counts a day.
 */
export function slotLapse(ctx: RunContext, model: string, since: number, maxDurationMs?: number): number {
  const longest =
    ctx.indeterminateSlotMs ??
    maxDurationMs ??
    ctx.client.research.listModels().find((m) => m.id === model)?.limits.maxDurationMs ??
    DAY_MS;
  return since + longest;
}

/**
 * Defers a job: runs `multi` with its status and `fields` (the error, …), the `ended` entry
 * that wakes waiters and, with `slots`, its fleet slot kept until `lapse` (ms), or given back
 * without one (nothing of it runs at the provider).
 */
async function storeDeferral(
  multi: ChainableCommander,
  keys: ReturnType<typeof stateKeys>,
  id: string,
  fields: Record<string, string | number>,
  slots: string | undefined,
  lapse: number | undefined,
) {
  multi.hset(keys.state, { status: "deferred", ...fields });
  markEnded(multi, keys, "deferred");
  if (slots !== undefined) {
    if (lapse === undefined) multi.zrem(slots, id);
    else multi.zadd(slots, "XX", lapse, id);
  }
  await multi.exec();
  return "deferred" as const;
}

/**
 * BullMQ gave up on a job's queue entry: its attempts were spent on failures that were not the
 * job's (Redis, a worker's own setup, a bug), and no run will come. The job's state says so,
 * once, and its end wakes `settled()` and tails. A job that may be running at the provider (a
 * stored ref, or a portable start, found again by its key) is `deferred`, with the error,
 * keeping its fleet slot until such a run would be over: `queue.resume(id)` brings it back. One
 * whose submission may have been sent with no ref stored is `indeterminate` (never sent again).
 * One never sent is `failed` with the error and an `error` and a `done` event (`cancelled`, with
 * no event, if a cancellation was stored meanwhile), its slot given back.
 */
export async function giveUp(
  ctx: RunContext,
  id: string,
  error: unknown,
  runs: number,
): Promise<WorkerJobStatus | undefined> {
  const { redis } = ctx;
  const state = await readState(redis, ctx.prefix, id);
  if (!state || isSettled(state.status)) return state?.status;
  const keys = stateKeys(ctx.prefix, id);
  const { engine, slots } = engineOf(ctx, state);
  const cause = (error instanceof Error ? error.message : String(error)).replace(/\.?$/, ".");
  const reason = {
    code: SondeError.isInstance(error) ? error.code : "worker_failed",
    message: `BullMQ gave up on job ${id} after ${runs} runs that failed without ending it; the last: ${cause}`,
  };
  const since = state.ref?.createdAt ?? state.submittingAt;
  if (state.ref || (state.submittingAt && engine === "portable")) {
    const lapse = slots === undefined ? undefined : slotLapse(ctx, state.model, Date.parse(since!));
    return storeDeferral(redis.multi(), keys, id, { error: JSON.stringify(reason) }, slots, lapse);
  }
  if (state.submittingAt) {
    if (slots) await redis.zadd(slots, "XX", slotLapse(ctx, state.model, Date.parse(since!)), id);
    return storeEnd(ctx, id, undefined, "indeterminate", undefined, {
      code: "indeterminate_submission",
      message: `The submission of job ${id} may have reached ${engine} (sent ${state.submittingAt}), but no ref was stored, and ${reason.message} It is not sent again: look for it in the provider account.`,
    });
  }
  if (state.cancelRequestedAt) return storeEnd(ctx, id, slots, "cancelled");
  const [last] = await redis.xrevrange(ctx.events.keys(id).events, "+", "-", "COUNT", 1);
  const { rest, final } = failureEvents(reason, storedSoFar(last));
  return storeEnd(ctx, id, slots, "failed", undefined, reason, final, rest);
}

export class JobRun {
  readonly #ctx: RunContext;
  readonly #id: string;
  readonly #state: WorkerJobState;
  readonly #request: ResearchRequest;
  readonly #resolved: Resolved;
  readonly #keys: ReturnType<typeof stateKeys>;
  readonly #stored: StoredSoFar;
  /** When this run marked the submission as about to be sent (its first step, begin-run.lua, or open()). */
  #markedAt: string | undefined;
  /** This run began with less than LAST_READ_MS of its job's timeout left: it does not hold. */
  #lastRead = false;
  #keepSlot = false;

  constructor(
    ctx: RunContext,
    state: WorkerJobState,
    stored: StoredSoFar,
    request: ResearchRequest,
    resolved: Resolved,
    markedAt?: string,
  ) {
    this.#ctx = ctx;
    this.#markedAt = markedAt;
    this.#stored = stored;
    this.#id = state.id;
    this.#state = state;
    this.#request = request;
    this.#resolved = resolved;
    this.#keys = stateKeys(ctx.prefix, state.id);
  }

  get #provider(): string {
    return this.#resolved.provider;
  }

  get #limit(): number | undefined {
    return this.#ctx.limits[this.#provider];
  }

  /** Takes the engine's fleet slot (true) unless every one is held by a job in flight. */
  async takeSlot(): Promise<boolean> {
    const limit = this.#limit;
    if (limit === undefined) return true;
    const slots = this.#keys.slots(this.#provider);
    return (await acquireSlot(this.#ctx.redis, [slots], [this.#id, limit, Date.now()])) === 1;
  }

  /**
   * Stores the outcome (and result, the events not written yet and the job's `done` event)
   * and gives the slot back, in one atomic step (finish-run.lua): whoever sees `done` in the
   * stream, or is woken by the end, can read the result at once.
   */
  async #finish(
    status: WorkerJobStatus,
    result?: unknown,
    error?: { code: string; message: string },
    final?: FinalEvent,
    rest?: Batch,
  ) {
    // The rare `created` that no write took yet binds the provider's job id first.
    if (rest?.created !== undefined) await this.#bindProviderJob(rest.created);
    const slot = this.#limit !== undefined && !this.#keepSlot;
    const slots = slot ? this.#keys.slots(this.#provider) : undefined;
    return storeEnd(this.#ctx, this.#id, slots, status, result, error, final, rest);
  }

  /**
   * Ends the job `indeterminate`: its submission (sent at `sentAt`) may have reached the
   * provider, and no ref came back. It is never sent again; with a fleet limit, it keeps its
   * slot until such a run would be over, since it may be running at the provider.
   */
  async #indeterminate(sentAt: string, message: string) {
    await this.#keepSlotUntilLapse(sentAt);
    return this.#finish("indeterminate", undefined, { code: "indeterminate_submission", message });
  }

  /**
   * With a fleet limit, keeps this job's slot past its end until a run submitted at `since`
   * (ISO) would be over: a job no longer followed may still be running at the provider.
   */
  async #keepSlotUntilLapse(since: string) {
    if (this.#limit === undefined) return;
    await this.#ctx.redis.zadd(this.#keys.slots(this.#provider), "XX", this.#lapse(since), this.#id);
    this.#keepSlot = true;
  }

  /** When the slot of this job, submitted at `since` (ISO), lapses if it is no longer followed. */
  #lapse(since: string): number {
    const { modelInfo } = this.#resolved;
    return slotLapse(this.#ctx, modelInfo.id, Date.parse(since), modelInfo.limits.maxDurationMs);
  }

  #bindProviderJob(jobId: string) {
    const { redis, resultTtlMs } = this.#ctx;
    // So a provider's webhook (which names its own job id) can wake this job.
    return redis.set(this.#keys.byProviderJob(this.#provider, jobId), this.#id, "PX", resultTtlMs);
  }

  /** What is left of the job's timeout, counted from its submission; LAST_READ_MS at least. */
  #timeLeft(submittingAt: string): number {
    const left = Date.parse(submittingAt) + this.#resolved.timeoutMs - Date.now();
    this.#lastRead = !(left > LAST_READ_MS);
    return this.#lastRead ? LAST_READ_MS : left;
  }

  /** Attaches from the stored ref, or submits once; a final status when there is nothing to run. */
  async open(): Promise<ResearchJob | WorkerJobStatus> {
    const { client, redis } = this.#ctx;
    const state = this.#state;
    if (state.ref) {
      try {
        return client.research.attach(state.ref, {
          repeatInterruptedCalls: this.#ctx.repeatInterruptedCalls,
          // The job's timeout runs from its submission, not from each attach: a poll-only job,
          // attached on every wake, would otherwise never time out. Counted on the workers'
          // clocks (the one that marked the submission, and this one: skew between them shifts
          // it), not the client's, which may be another. Past it, one last read. A portable
          // job's deadline is its research deadline, after which it writes its report: it keeps
          // its own.
          ...(this.#provider !== "portable" &&
            state.submittingAt !== undefined && { timeoutMs: this.#timeLeft(state.submittingAt) }),
        });
      } catch (error) {
        // The ref is refused before any request (not a valid ref, a retired model): the job
        // can no longer be followed. It may be running at the provider, so a fleet limit keeps
        // counting it until such a run would be over.
        if (!refusal(error)) throw error;
        await this.#keepSlotUntilLapse(state.ref.createdAt);
        return this.#failed(error);
      }
    }
    if (state.submittingAt && this.#provider !== "portable")
      return this.#indeterminate(
        state.submittingAt,
        `The submission of job ${this.#id} may have reached ${this.#provider} (sent ${state.submittingAt}), but no ref was stored before its worker stopped. It is not sent again: look for it in the provider account.`,
      );
    if (state.cancelRequestedAt) return this.#finish("cancelled");
    // Marked already when the run began, unless the engine has a fleet slot to take first.
    if (this.#markedAt === undefined) {
      this.#markedAt = new Date().toISOString();
      await redis.hset(this.#keys.state, { submittingAt: this.#markedAt, status: "running" });
    }
    // Portable starts are idempotent by key: a restart before `created` finds the same job. The
    // key names this queueing of the job (its state's `createdAt`), not only its id: a key used
    // again once the state expired queues a new job under the same id, which the store still
    // knows. A restart uses the key stored with the submission, or the bare id, which an earlier
    // version used.
    const request = this.#request;
    let submitted = request;
    if (this.#provider === "portable" && !request.idempotencyKey) {
      const [stored, createdAt] = await redis.hmget(this.#keys.state, "portableKey", "createdAt");
      const key = stored ?? (state.submittingAt ? this.#id : `${this.#id}:${createdAt ?? ""}`);
      if (!stored) await redis.hset(this.#keys.state, "portableKey", key);
      submitted = { ...request, idempotencyKey: key };
    }
    try {
      return client.research.start(submitted);
    } catch (error) {
      // start() refuses before it sends anything (the engine's own checks, a setting this
      // worker lacks): the mark is taken back, so that no later run calls the job indeterminate.
      await unmark(redis, this.#keys.state, state.status);
      if (refusal(error)) return this.#failed(error);
      throw error;
    }
  }

  /** Ends the job `failed` with `error`, before anything of it ran: an `error` and a `done` event, once. */
  #failed(error: SondeError) {
    const { rest, final } = failureEvents(error, this.#stored);
    return this.#finish("failed", undefined, errorOf(error), final, rest);
  }

  /** Drives `job` to its end or to a hold, writing its events as they come. */
  async drive(job: ResearchJob): Promise<WorkerJobStatus> {
    let seq = this.#stored.count;
    // `done` is stored with the result; a stream that ends with it anyway (an older worker's)
    // gets no second one from the attach.
    const doneStored = this.#stored.done;
    let final: FinalEvent | undefined;
    const cancels = this.#watchCancel(job);
    const writer = this.#writer(cancels.seen);
    const unsettled: ResearchEvent[] = [];
    // Until the provider's job has an id, an event can only be how its submission ended: held,
    // unnumbered, until `created` or the end, so that a submission abandoned by a cancel (which
    // may have been accepted) writes nothing that claims an end (#abandoned).
    let identified = this.#state.ref !== undefined;
    let held: ResearchEvent[] = [];
    let progressed = false;
    // A poll-only job gives its slot back after a while, but only once its ref is stored:
    // before that a second run could not attach, and would have to call it indeterminate.
    let holdTimer: ReturnType<typeof setTimeout> | undefined;
    let over = false;
    const hold = () => {
      if (this.#resolved.modelInfo.capabilities.pollOnly && !holdTimer && !over && !this.#lastRead)
        holdTimer = setTimeout(() => job.abort(new Hold()), this.#ctx.holdMs);
    };
    /** Numbers `event` and queues it for the stream (`done`: for the final step). */
    const place = (event: ResearchEvent) => {
      if (event.type === "done") {
        final = { seq, text: storedText(event, seq++), ref: refOf(job) };
        return;
      }
      const created = event.type === "created" ? event.jobId : undefined;
      writer.push(seq, storedText(event, seq++), refOf(job), created);
      if (created !== undefined) writer.flush().then(hold, () => {});
      progressed = true;
    };
    const placeHeld = () => {
      for (const event of held) place(event);
      held = [];
    };
    if (this.#state.ref) hold();
    try {
      for await (const event of job) {
        if (doneStored) continue;
        // A retryable failure ends this run, not the job: its error and `done` are stored
        // only if the job turns out to be over.
        if (
          (event.type === "error" && event.error.retryable) ||
          (event.type === "done" && event.status === "failed")
        ) {
          unsettled.push(event);
          continue;
        }
        if (!identified) {
          if (event.type !== "created") {
            held.push(event);
            continue;
          }
          identified = true;
          placeHeld();
        }
        place(event);
      }
      const result = await job.result();
      await cancels.settled();
      if (!identified && this.#abandoned(cancels.outcome())) {
        return await this.#indeterminate(
          this.#markedAt!,
          `Job ${this.#id} was cancelled while its submission to ${this.#provider} (sent ${this.#markedAt}) had no answer: the provider may have accepted it, and no job id came back. It is not sent again: look for it in the provider account.`,
        );
      }
      placeHeld();
      // What is not written yet goes in the final step, with `done` and the result.
      const rest = await writer.rest();
      return await this.#finish(result.status as WorkerJobStatus, result, undefined, final, rest);
    } catch (error) {
      // Whatever was read is stored before the run ends, so the next run resumes after it.
      if (identified || !this.#abandoned(cancels.outcome())) placeHeld();
      await writer.flush();
      return await this.#interrupted(error, progressed, unsettled, seq, job.id === undefined, refOf(job));
    } finally {
      over = true;
      clearTimeout(holdTimer);
      cancels.stop();
    }
  }

  /**
   * A cancel reached the job while this run's submission had no answer yet: the job's own
   * `cancel()` could only abandon the request (`transport-only`), which the provider may have
   * accepted all the same. The job is not cancelled but indeterminate. (A portable start is
   * idempotent by key and runs here: its cancel is what it says.)
   */
  #abandoned(outcome: CancelOutcome | undefined): boolean {
    return (
      outcome?.outcome === "transport-only" && this.#markedAt !== undefined && this.#provider !== "portable"
    );
  }

  /**
   * Writes a batch and the ref after it (and, with `created`, the provider job's binding) in
   * one step, which also answers whether a cancellation is stored (`cancelSeen`).
   */
  #writer(cancelSeen: (requested: boolean) => void): EventWriter {
    const { redis, events, resultTtlMs, eventBatchMs } = this.#ctx;
    const keys = events.keys(this.#id);
    return new EventWriter(async ({ joined, count, first, ref, created }) => {
      // So a provider's webhook (which names its own job id) can wake this job.
      const keyList = [keys.events, keys.state];
      const bind = created === undefined ? [] : [this.#id, resultTtlMs];
      if (created !== undefined) keyList.push(this.#keys.byProviderJob(this.#provider, created));
      const [added, , cancelRequested] = await appendRetrying(joined, count, first, (batch) =>
        writeEvents(redis, keyList, [events.ttlMs, refText(ref), ...batchArgs(batch), ...bind]),
      );
      if (added === -2) throw new EndedElsewhere(this.#id);
      cancelSeen(cancelRequested === 1);
    }, eventBatchMs);
  }

  /**
   * Cancels the job once a cancellation is stored, and records the outcome. It looks every
   * `cancelPollMs`, unless a write of the job's events told it meanwhile (`seen`: each write
   * answers whether a cancellation is stored), so a job whose events flow costs no polls.
   */
  #watchCancel(job: ResearchJob) {
    const { redis, cancelPollMs } = this.#ctx;
    let cancelling: Promise<unknown> | undefined;
    let answered: CancelOutcome | undefined;
    let seenAt = performance.now();
    const cancel = () => {
      cancelling ??= job.cancel().then(
        (outcome) => {
          answered = outcome;
          return redis.hset(this.#keys.state, { cancelOutcome: JSON.stringify(outcome) });
        },
        () => {
          cancelling = undefined;
        },
      );
    };
    const timer = setInterval(async () => {
      if (cancelling || performance.now() - seenAt < cancelPollMs) return;
      seenAt = performance.now();
      if (await redis.hget(this.#keys.state, "cancelRequestedAt").catch(() => null)) cancel();
    }, cancelPollMs);
    return {
      settled: () => cancelling,
      /** What the job's `cancel()` answered, once it did. */
      outcome: () => answered,
      stop: () => clearInterval(timer),
      seen(requested: boolean) {
        seenAt = performance.now();
        if (requested) cancel();
      },
    };
  }

  /**
   * A run that threw: waiting for its next wake, deferred, failed, or (a submission that may
   * have been accepted, with no job id back) indeterminate. `unidentified`: the job got no id;
   * `ref`: the job's ref, if it has one.
   */
  async #interrupted(
    error: unknown,
    progressed: boolean,
    unsettled: ResearchEvent[],
    seq: number,
    unidentified: boolean,
    ref: unknown,
  ) {
    // Redis or the job store failing is not the job failing: BullMQ runs it again, and the
    // next run attaches from the stored ref.
    if (!SondeError.isInstance(error) || error.code === "store_error") throw error;
    const { redis, events } = this.#ctx;
    // A hold or a failure writes a status and queues a wake without an event to refuse: a run
    // whose job another run ended meanwhile (its lock lapsed) must not reopen it.
    if (FINAL_STATUSES.includes((await redis.hget(this.#keys.state, "status")) as WorkerJobStatus))
      throw new EndedElsewhere(this.#id);
    const held = (error as { reason?: unknown }).reason instanceof Hold;
    // This run sent the job's submission, and no job id came back.
    if (this.#markedAt !== undefined && unidentified && this.#provider !== "portable") {
      // The engine said the submission may have been accepted (or it was cut off mid-way): it
      // may exist and bill. Look, never retry.
      if (
        IndeterminateSubmissionError.isInstance(error) ||
        (JobAbortedError.isInstance(error) && error.jobState === "unconfirmed")
      )
        return this.#indeterminate(this.#markedAt, error.message);
      // Any other failure proves the provider did not take it (a refused connection, a status
      // line: the engine spec's rule, by which the job itself resends the retryable ones).
      // A retryable one is tried again as a job never submitted, after a backoff.
      if (error.retryable) return this.#retryUnsent(error);
      await redis.hdel(this.#keys.state, "submittingAt");
    }
    if (held || error.retryable) {
      // Progress clears the failure count; a retryable failure without it counts one more.
      const failures = held || progressed ? 0 : this.#state.failures + 1;
      if (failures >= MAX_RETRYABLE_FAILURES) {
        // A job with a provider job (or a portable start, found again by its key) may still
        // be running there: it keeps its fleet slot.
        const since = (ref as { createdAt?: string } | undefined)?.createdAt ?? this.#markedAt;
        return this.#defer(failures, errorOf(error), this.#ctx.redis.multi(), since);
      }
      return this.#wakeLater("waiting", failures, progressed);
    }
    if (unsettled.length > 0)
      await events.appendMany(
        this.#id,
        unsettled.map((event, n) => ({ ...event, seq: seq + n })),
      );
    return this.#finish("failed", undefined, { code: error.code, message: error.message });
  }

  /**
   * A submission the provider certainly did not take, with a retryable failure: the mark is
   * taken back and the engine's slot given back (nothing runs at the provider), and the job
   * waits `queued` for a wake that submits it again; after five such failures in a row it is
   * deferred.
   */
  async #retryUnsent(error: SondeError) {
    const failures = this.#state.failures + 1;
    const multi = this.#ctx.redis.multi().hdel(this.#keys.state, "submittingAt");
    if (failures >= MAX_RETRYABLE_FAILURES) return this.#defer(failures, errorOf(error), multi);
    if (this.#limit !== undefined) multi.zrem(this.#keys.slots(this.#provider), this.#id);
    await multi.exec();
    return this.#wakeLater("queued", failures, false);
  }

  /**
   * Defers the job with the last failure's `error`: it waits for `queue.resume(id)`. A job that
   * may still be running at the provider (submitted at `since`) keeps its fleet slot until such
   * a run would be over; one that never got there gives it back. `multi` carries writes to
   * make with it.
   */
  async #defer(
    failures: number,
    error: { code: string; message: string },
    multi: ReturnType<Redis["multi"]>,
    since?: string,
  ) {
    const slots = this.#limit === undefined ? undefined : this.#keys.slots(this.#provider);
    const lapse = since === undefined ? undefined : this.#lapse(since);
    const fields = { failures, error: JSON.stringify(error) };
    return storeDeferral(multi, this.#keys, this.#id, fields, slots, lapse);
  }

  /** Sets `status` and schedules the job's next wake, after the persisted backoff (the shortest after progress). */
  async #wakeLater(status: WorkerJobStatus, failures: number, progressed: boolean) {
    const { redis, backoff, wakes } = this.#ctx;
    const delay = progressed
      ? backoff.minMs
      : Math.min(backoff.maxMs, Math.max(backoff.minMs, (this.#state.backoffMs ?? backoff.minMs / 2) * 2));
    const generation = await redis.hincrby(this.#keys.state, "wakes", 1);
    await redis.hset(this.#keys.state, { status, failures, backoffMs: delay });
    const wake = await wakes.add(
      "wake",
      { id: this.#id },
      {
        jobId: wakeJobId(this.#id, generation),
        delay,
        ...reruns(this.#ctx.attempts),
        ...keptFor(this.#ctx.resultTtlMs),
      },
    );
    // A webhook that came while this run was going found no wake to promote: promote it now.
    if (await redis.hget(this.#keys.state, "wakeRequestedAt")) await wake.promote().catch(() => {});
    return status;
  }
}

/**
 * The event as the stream stores it, numbered `seq`. The delivered event is this run's own
 * object (the job makes one per delivery and keeps no reference that reads `seq` or
 * `rawEvent`), so it is numbered and its raw payload (large, and only of use to this process)
 * dropped in place rather than copied.
 */
function storedText(event: ResearchEvent, seq: number): string {
  event.seq = seq;
  if (event.rawEvent !== undefined) event.rawEvent = undefined;
  return JSON.stringify(event);
}

const refText = (ref: unknown) => (ref === undefined ? "" : JSON.stringify(ref));

/** The job's ref now; before `created` there is none. */
function refOf(job: ResearchJob): unknown {
  try {
    return job.toRef();
  } catch {
    return undefined;
  }
}
