/// <reference path="../redis/lua.d.ts" />
/**
 * The consumer side of `sonde/worker`: a BullMQ worker that drives research jobs. It stores
 * the job's ref with every event it writes to the job's stream (one atomic step), so a
 * worker that takes over a stalled or dead worker's job attaches from exactly there and
 * never submits again; a job whose submission may have been sent without a stored ref is
 * `indeterminate`, never retried. Poll-only jobs give their slot back between polls
 * (delayed "wake" jobs with a persisted exponential backoff).
 */
import { type ConnectionOptions, DelayedError, type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { SondeClient } from "../client.js";
import { SondeError } from "../errors.js";
import type { ResearchEvent } from "../events.js";
import type { ResearchJob } from "../job.js";
import { createEventLog } from "../redis/events.js";
import { luaScript } from "../redis/scripts.js";
import type { ResearchRequest } from "../request.js";
import acquireSlotSource from "./commands/acquire-slot.lua";
import { DEFAULT_QUEUE, RERUNS, researchJobId, wakeJobId } from "./queue.js";
import { DAY_MS, FINAL_STATUSES, readState, stateKeys, type WorkerJobStatus } from "./state.js";

const acquireSlot = luaScript(acquireSlotSource);

export interface WorkerSetup {
  redis: Redis;
  /** BullMQ's connection. @defaultValue `redis` */
  connection?: ConnectionOptions;
  /** The client that runs the jobs (keys, portable.store = a Redis store, …). */
  client: SondeClient;
  queueName?: string;
  prefix?: string;
  /** Jobs this worker drives at once. @defaultValue 4 */
  concurrency?: number;
  /** Jobs in flight across the whole fleet, per engine. @defaultValue { hosted: 1 } */
  engineLimits?: Partial<Record<string, number>>;
  /** A poll-only job gives its slot back after this long without ending. @defaultValue 60_000 */
  holdMs?: number;
  /** First and largest delay between wakes of a waiting job. @defaultValue { min: 5_000, max: 300_000 } */
  wakeBackoff?: { minMs: number; maxMs: number };
  /** How long the final result is kept. @defaultValue seven days */
  resultTtlMs?: number;
  /** How often a running job checks for a stored cancellation. @defaultValue 500 */
  cancelPollMs?: number;
  /** BullMQ lock: a worker silent this long is stalled and its job moves on. @defaultValue 30_000 */
  lockDurationMs?: number;
  /** Portable jobs: send again calls a dead worker left in flight (may have been billed). @defaultValue false */
  repeatInterruptedCalls?: boolean;
}

export interface ResearchWorker {
  readonly worker: Worker;
  close(): Promise<void>;
}

/** Consecutive retryable failures after which a job is deferred. */
export const MAX_RETRYABLE_FAILURES = 5;

class Hold {
  readonly reason = "hold";
}

export function createResearchWorker(setup: WorkerSetup): ResearchWorker {
  const prefix = setup.prefix ?? "sonde:";
  const { redis, client } = setup;
  const queueName = setup.queueName ?? DEFAULT_QUEUE;
  const connection = (setup.connection ?? redis) as never;
  const events = createEventLog(redis, { prefix });
  const wakes = new Queue(queueName, { connection });
  const limits: Partial<Record<string, number>> = { hosted: 1, ...setup.engineLimits };
  const backoff = setup.wakeBackoff ?? { minMs: 5_000, maxMs: 300_000 };
  const resultTtl = setup.resultTtlMs ?? 7 * DAY_MS;

  const processJob = async (bull: Job<{ id: string }>, token?: string): Promise<string> => {
    const { id } = bull.data;
    const keys = stateKeys(prefix, id);
    const state = await readState(redis, prefix, id);
    const requestText = await redis.hget(keys.state, "request");
    if (!state || !requestText) return "missing";
    if (FINAL_STATUSES.includes(state.status) || state.status === "deferred") return state.status;
    const request = JSON.parse(requestText) as ResearchRequest;
    const resolved = client.research.validate(request);
    const provider = resolved.provider;
    const set = (fields: Record<string, string | number>) => redis.hset(keys.state, fields);
    const limit = limits[provider];
    if (limit !== undefined) {
      const got = await acquireSlot(redis, [keys.slots(provider)], [id, limit, Date.now()]);
      if (got !== 1) {
        // Every slot is taken by jobs still in flight: look again shortly.
        await bull.moveToDelayed(Date.now() + 1_000, token);
        throw new DelayedError();
      }
    }
    const releaseSlot = () => (limit === undefined ? 0 : redis.zrem(keys.slots(provider), id));
    const finish = async (
      status: WorkerJobStatus,
      result?: unknown,
      error?: { code: string; message: string },
    ) => {
      const multi = redis.multi();
      if (result !== undefined) multi.set(keys.result, JSON.stringify(result), "PX", resultTtl);
      multi.hset(keys.state, { status, ...(error && { error: JSON.stringify(error) }) });
      multi.pexpire(keys.state, resultTtl);
      await multi.exec();
      await releaseSlot();
      return status;
    };

    let job: ResearchJob;
    if (state.ref) {
      job = client.research.attach(state.ref, {
        repeatInterruptedCalls: setup.repeatInterruptedCalls ?? false,
      });
    } else if (state.submittingAt && provider !== "portable") {
      return finish("indeterminate", undefined, {
        code: "indeterminate_submission",
        message: `The submission of job ${id} may have reached ${provider} (sent ${state.submittingAt}), but no ref was stored before its worker stopped. It is not sent again: look for it in the provider account.`,
      });
    } else if (state.cancelRequestedAt) {
      return finish("cancelled", undefined);
    } else {
      await set({ submittingAt: new Date().toISOString(), status: "running" });
      // Portable starts are idempotent by key: a restart before `created` finds the same job.
      const submitted =
        provider === "portable" && !request.idempotencyKey ? { ...request, idempotencyKey: id } : request;
      job = client.research.start(submitted);
    }

    let seq = await redis.xlen(events.keys(id).events);
    // A worker that died after storing the job's `done` but before its result: the attach
    // produces `done` again (it is not a provider event the ref's cursor covers); store it once.
    const [last] = await redis.xrevrange(events.keys(id).events, "+", "-", "COUNT", 1);
    const doneStored = last !== undefined && (JSON.parse(last[1][1]!) as ResearchEvent).type === "done";
    const unsettled: ResearchEvent[] = [];
    let progressed = false;
    const pollOnly = resolved.modelInfo.capabilities?.pollOnly === true;
    const holdTimer = pollOnly ? setTimeout(() => job.abort(new Hold()), setup.holdMs ?? 60_000) : undefined;
    let cancelling: Promise<unknown> | undefined;
    const cancelWatch = setInterval(async () => {
      if (cancelling || !(await redis.hget(keys.state, "cancelRequestedAt").catch(() => null))) return;
      cancelling = job.cancel().then(
        (outcome) => set({ cancelOutcome: JSON.stringify(outcome) }),
        () => {
          cancelling = undefined;
        },
      );
    }, setup.cancelPollMs ?? 500);
    try {
      for await (const event of job) {
        if (doneStored) continue;
        // A retryable failure ends this attach, not the job: its error and `done` are stored
        // only if the job turns out to be over.
        if (
          (event.type === "error" && event.error.retryable) ||
          (event.type === "done" && event.status === "failed")
        ) {
          unsettled.push(event);
          continue;
        }
        let ref: unknown;
        try {
          ref = job.toRef();
        } catch {
          // Before `created` there is no ref yet.
        }
        await events.append(id, { ...event, seq }, ref ? { ref } : undefined);
        if (event.type === "created") {
          // So a provider's webhook (which names its own job id) can wake this job.
          await redis.set(keys.byProviderJob(provider, event.jobId), id, "PX", resultTtl);
        }
        seq++;
        progressed = true;
      }
      const result = await job.result();
      await cancelling;
      return await finish(result.status as WorkerJobStatus, result);
    } catch (error) {
      // Redis or the job store failing is not the job failing: BullMQ runs it again, and the
      // next run attaches from the stored ref.
      if (!SondeError.isInstance(error) || error.code === "store_error") throw error;
      const held = SondeError.isInstance(error) && (error as { reason?: unknown }).reason instanceof Hold;
      const retryable = SondeError.isInstance(error) && error.retryable;
      if (held || retryable) {
        // Progress clears the failure count; a retryable failure without it counts one more.
        const failures = held || progressed ? 0 : state.failures + 1;
        if (failures >= MAX_RETRYABLE_FAILURES) {
          await set({ status: "deferred", failures });
          await releaseSlot();
          return "deferred";
        }
        const delay = progressed
          ? backoff.minMs
          : Math.min(backoff.maxMs, Math.max(backoff.minMs, (state.backoffMs ?? backoff.minMs / 2) * 2));
        const generation = await redis.hincrby(keys.state, "wakes", 1);
        await set({ status: "waiting", failures, backoffMs: delay });
        await wakes.add("wake", { id }, { jobId: wakeJobId(id, generation), delay, ...RERUNS });
        return "waiting";
      }
      for (const event of unsettled) await events.append(id, { ...event, seq: seq++ });
      const described = SondeError.isInstance(error)
        ? { code: error.code, message: error.message }
        : { code: "worker_error", message: String((error as Error)?.message ?? error) };
      return await finish("failed", undefined, described);
    } finally {
      clearTimeout(holdTimer);
      clearInterval(cancelWatch);
    }
  };

  const worker = new Worker(queueName, processJob, {
    connection,
    concurrency: setup.concurrency ?? 4,
    lockDuration: setup.lockDurationMs ?? 30_000,
    // Look for stalled jobs as often as a lock can lapse, so a dead worker's jobs move on soon.
    stalledInterval: setup.lockDurationMs ?? 30_000,
    // A stalled job is safe to hand over (it attaches from its ref); never give up on it.
    maxStalledCount: 1_000_000,
  });
  return {
    worker,
    async close() {
      await worker.close();
      await wakes.close();
    },
  };
}

export { researchJobId };
