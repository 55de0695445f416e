/// <reference path="../redis/lua.d.ts" />
/**
 * One run of a research job by a worker: take the engine's fleet slot, attach from the
 * stored ref (never submit twice) or submit once, drive the job while its events are written
 * to its stream (with the ref, in one atomic step per write), and record how the run ended:
 * finished, waiting for its next wake, deferred, or indeterminate.
 */
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { SondeClient } from "../client.js";
import { SondeError } from "../errors.js";
import type { ResearchEvent } from "../events.js";
import type { ResearchJob } from "../job.js";
import {
  type AppendAnswer,
  batchArgs,
  type EncodedBatch,
  type EventLog,
  encodeJoined,
} from "../redis/events.js";
import { luaScript, withAppendBatch } from "../redis/scripts.js";
import type { ResearchRequest } from "../request.js";
import acquireSlotSource from "./commands/acquire-slot.lua";
import finishRunSource from "./commands/finish-run.lua";
import writeEventsSource from "./commands/write-events.lua";
import { keptFor, RERUNS, wakeJobId } from "./queue.js";
import {
  ENDED_TTL_MS,
  markEnded,
  STATE_FIELDS,
  stateKeys,
  type WorkerJobState,
  type WorkerJobStatus,
} from "./state.js";
import { type Batch, EventWriter } from "./writer.js";

const acquireSlot = luaScript(acquireSlotSource);
const writeEvents = luaScript(withAppendBatch(writeEventsSource));
const finishRun = luaScript(withAppendBatch(finishRunSource));

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

/** The job's `done` event (its stored JSON, numbered `seq`), stored with its result in one step. */
interface FinalEvent {
  seq: number;
  text: string;
  ref: unknown;
}

export class JobRun {
  readonly #ctx: RunContext;
  readonly #id: string;
  readonly #state: WorkerJobState;
  readonly #request: ResearchRequest;
  readonly #resolved: Resolved;
  readonly #keys: ReturnType<typeof stateKeys>;
  readonly #stored: StoredSoFar;
  /** The run's first step marked the submission as about to be sent (begin-run.lua). */
  readonly #marked: boolean;
  #keepSlot = false;

  constructor(
    ctx: RunContext,
    state: WorkerJobState,
    stored: StoredSoFar,
    request: ResearchRequest,
    resolved: Resolved,
    marked = false,
  ) {
    this.#ctx = ctx;
    this.#marked = marked;
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
    const { redis, resultTtlMs, events } = this.#ctx;
    const keys = events.keys(this.#id);
    // The rare `created` that no write took yet binds the provider's job id first.
    if (rest?.created !== undefined) await this.#bindProviderJob(rest.created);
    const joined = rest ? (final ? `${rest.joined},${final.text}` : rest.joined) : (final?.text ?? "");
    const count = (rest?.count ?? 0) + (final ? 1 : 0);
    const ref = final ? final.ref : rest?.ref;
    const slot = this.#limit !== undefined && !this.#keepSlot;
    const keyList = [keys.events, keys.state, this.#keys.result, this.#keys.ended];
    if (slot) keyList.push(this.#keys.slots(this.#provider));
    const fixed = [
      status,
      error ? JSON.stringify(error) : "",
      result === undefined ? "" : JSON.stringify(result),
      resultTtlMs,
      ENDED_TTL_MS,
      this.#id,
      ...STATE_FIELDS,
    ];
    await appendRetrying(joined, count, rest?.first ?? final?.seq ?? 0, (batch) =>
      finishRun(redis, keyList, [events.ttlMs, refText(ref), ...batchArgs(batch), ...fixed]),
    );
    return status;
  }

  #bindProviderJob(jobId: string) {
    const { redis, resultTtlMs } = this.#ctx;
    // So a provider's webhook (which names its own job id) can wake this job.
    return redis.set(this.#keys.byProviderJob(this.#provider, jobId), this.#id, "PX", resultTtlMs);
  }

  /** Attaches from the stored ref, or submits once; a final status when there is nothing to run. */
  async open(): Promise<ResearchJob | WorkerJobStatus> {
    const { client, redis } = this.#ctx;
    const state = this.#state;
    if (state.ref)
      return client.research.attach(state.ref, { repeatInterruptedCalls: this.#ctx.repeatInterruptedCalls });
    if (state.submittingAt && this.#provider !== "portable") {
      if (this.#limit !== undefined) {
        // It may be running at the provider: its slot lapses only when such a run would be over.
        const holdMs = this.#ctx.indeterminateSlotMs ?? this.#resolved.modelInfo.limits.maxDurationMs;
        const lapses = Date.parse(state.submittingAt) + holdMs;
        await redis.zadd(this.#keys.slots(this.#provider), "XX", lapses, this.#id);
        this.#keepSlot = true;
      }
      return this.#finish("indeterminate", undefined, {
        code: "indeterminate_submission",
        message: `The submission of job ${this.#id} may have reached ${this.#provider} (sent ${state.submittingAt}), but no ref was stored before its worker stopped. It is not sent again: look for it in the provider account.`,
      });
    }
    if (state.cancelRequestedAt) return this.#finish("cancelled");
    // Marked already when the run began, unless the engine has a fleet slot to take first.
    if (!this.#marked)
      await redis.hset(this.#keys.state, { submittingAt: new Date().toISOString(), status: "running" });
    // Portable starts are idempotent by key: a restart before `created` finds the same job.
    const request = this.#request;
    const submitted =
      this.#provider === "portable" && !request.idempotencyKey
        ? { ...request, idempotencyKey: this.#id }
        : request;
    return client.research.start(submitted);
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
    let progressed = false;
    // A poll-only job gives its slot back after a while, but only once its ref is stored:
    // before that a second run could not attach, and would have to call it indeterminate.
    let holdTimer: ReturnType<typeof setTimeout> | undefined;
    let over = false;
    const hold = () => {
      if (this.#resolved.modelInfo.capabilities.pollOnly && !holdTimer && !over)
        holdTimer = setTimeout(() => job.abort(new Hold()), this.#ctx.holdMs);
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
        if (event.type === "done") {
          final = { seq, text: storedText(event, seq++), ref: refOf(job) };
          continue;
        }
        const created = event.type === "created" ? event.jobId : undefined;
        writer.push(seq, storedText(event, seq++), refOf(job), created);
        if (created !== undefined) writer.flush().then(hold, () => {});
        progressed = true;
      }
      const result = await job.result();
      await cancels.settled();
      // What is not written yet goes in the final step, with `done` and the result.
      const rest = await writer.rest();
      return await this.#finish(result.status as WorkerJobStatus, result, undefined, final, rest);
    } catch (error) {
      // Whatever was read is stored before the run ends, so the next run resumes after it.
      await writer.flush();
      return await this.#interrupted(error, progressed, unsettled, seq);
    } finally {
      over = true;
      clearTimeout(holdTimer);
      cancels.stop();
    }
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
      const [, , cancelRequested] = await appendRetrying(joined, count, first, (batch) =>
        writeEvents(redis, keyList, [events.ttlMs, refText(ref), ...batchArgs(batch), ...bind]),
      );
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
    let seenAt = performance.now();
    const cancel = () => {
      cancelling ??= job.cancel().then(
        (outcome) => redis.hset(this.#keys.state, { cancelOutcome: JSON.stringify(outcome) }),
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
      stop: () => clearInterval(timer),
      seen(requested: boolean) {
        seenAt = performance.now();
        if (requested) cancel();
      },
    };
  }

  /** A run that threw: waiting for its next wake, deferred, or failed. */
  async #interrupted(error: unknown, progressed: boolean, unsettled: ResearchEvent[], seq: number) {
    // Redis or the job store failing is not the job failing: BullMQ runs it again, and the
    // next run attaches from the stored ref.
    if (!SondeError.isInstance(error) || error.code === "store_error") throw error;
    const { redis, backoff, wakes, events } = this.#ctx;
    const held = (error as { reason?: unknown }).reason instanceof Hold;
    if (held || error.retryable) {
      // Progress clears the failure count; a retryable failure without it counts one more.
      const failures = held || progressed ? 0 : this.#state.failures + 1;
      if (failures >= MAX_RETRYABLE_FAILURES) {
        const multi = redis.multi().hset(this.#keys.state, { status: "deferred", failures });
        markEnded(multi, this.#keys, "deferred");
        if (this.#limit !== undefined) multi.zrem(this.#keys.slots(this.#provider), this.#id);
        await multi.exec();
        return "deferred";
      }
      const delay = progressed
        ? backoff.minMs
        : Math.min(backoff.maxMs, Math.max(backoff.minMs, (this.#state.backoffMs ?? backoff.minMs / 2) * 2));
      const generation = await redis.hincrby(this.#keys.state, "wakes", 1);
      await redis.hset(this.#keys.state, { status: "waiting", failures, backoffMs: delay });
      const wake = await wakes.add(
        "wake",
        { id: this.#id },
        { jobId: wakeJobId(this.#id, generation), delay, ...RERUNS, ...keptFor(this.#ctx.resultTtlMs) },
      );
      // A webhook that came while this run was going found no wake to promote: promote it now.
      if (await redis.hget(this.#keys.state, "wakeRequestedAt")) await wake.promote().catch(() => {});
      return "waiting";
    }
    if (unsettled.length > 0)
      await events.appendMany(
        this.#id,
        unsettled.map((event, n) => ({ ...event, seq: seq + n })),
      );
    return this.#finish("failed", undefined, { code: error.code, message: error.message });
  }
}

/**
 * Sends `count` events of seqs `first`, `first + 1`, … (their stored JSON texts joined by
 * commas) with `send`, an append script (append-batch.lua); if part of them was stored before
 * (a worker that was taken over and still wrote), sends again what is past the stored end.
 * Returns the script's last answer.
 */
export async function appendRetrying(
  joined: string,
  count: number,
  first: number,
  send: (batch: EncodedBatch) => Promise<unknown>,
): Promise<number[]> {
  for (;;) {
    const answer = (await send(encodeJoined(joined, count, first))) as number[];
    const [added, top] = answer as AppendAnswer;
    if (added >= 0) return answer;
    // Rare (a takeover's overlap): the texts are JSON.stringify's, so they round-trip exactly.
    const texts = (JSON.parse(`[${joined}]`) as unknown[])
      .slice(top - first + 1)
      .map((e) => JSON.stringify(e));
    joined = texts.join(",");
    count = texts.length;
    first = top + 1;
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
