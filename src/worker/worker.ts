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

/** What every job this worker runs shares. */
interface WorkerEnv {
  setup: WorkerSetup;
  prefix: string;
  redis: Redis;
  client: SondeClient;
  events: ReturnType<typeof createEventLog>;
  wakes: Queue;
  limits: Partial<Record<string, number>>;
  backoff: { minMs: number; maxMs: number };
  resultTtl: number;
}

/** One run of one queued job, once its state is read and its engine slot is held. */
interface Run {
  id: string;
  keys: ReturnType<typeof stateKeys>;
  state: NonNullable<Awaited<ReturnType<typeof readState>>>;
  request: ResearchRequest;
  resolved: ReturnType<SondeClient["research"]["validate"]>;
  set(fields: Record<string, string | number>): Promise<unknown>;
  releaseSlot(): Promise<unknown>;
  finish(
    status: WorkerJobStatus,
    result?: unknown,
    error?: { code: string; message: string },
  ): Promise<string>;
}

/** Reads the job's state and takes an engine slot; a string is the status to end this run with. */
async function claim(env: WorkerEnv, bull: Job<{ id: string }>, token?: string): Promise<Run | string> {
  const { redis, prefix } = env;
  const { id } = bull.data;
  const keys = stateKeys(prefix, id);
  const state = await readState(redis, prefix, id);
  const requestText = await redis.hget(keys.state, "request");
  if (!state || !requestText) return "missing";
  if (FINAL_STATUSES.includes(state.status) || state.status === "deferred") return state.status;
  const request = JSON.parse(requestText) as ResearchRequest;
  const resolved = env.client.research.validate(request);
  const provider = resolved.provider;
  const limit = env.limits[provider];
  if (limit !== undefined) {
    const got = await acquireSlot(redis, [keys.slots(provider)], [id, limit, Date.now()]);
    if (got !== 1) {
      // Every slot is taken by jobs still in flight: look again shortly.
      await bull.moveToDelayed(Date.now() + 1_000, token);
      throw new DelayedError();
    }
  }
  const releaseSlot = async () => (limit === undefined ? 0 : redis.zrem(keys.slots(provider), id));
  return {
    id,
    keys,
    state,
    request,
    resolved,
    set: (fields) => redis.hset(keys.state, fields),
    releaseSlot,
    async finish(status, result, error) {
      const multi = redis.multi();
      if (result !== undefined) multi.set(keys.result, JSON.stringify(result), "PX", env.resultTtl);
      multi.hset(keys.state, { status, ...(error && { error: JSON.stringify(error) }) });
      multi.pexpire(keys.state, env.resultTtl);
      await multi.exec();
      await releaseSlot();
      return status;
    },
  };
}

/** Attaches from the stored ref, or submits; a string is the status the run ended with instead. */
async function openJob(env: WorkerEnv, run: Run): Promise<ResearchJob | string> {
  const { state, id, request } = run;
  const provider = run.resolved.provider;
  if (state.ref) {
    return env.client.research.attach(state.ref, {
      repeatInterruptedCalls: env.setup.repeatInterruptedCalls ?? false,
    });
  }
  if (state.submittingAt && provider !== "portable") {
    return run.finish("indeterminate", undefined, {
      code: "indeterminate_submission",
      message: `The submission of job ${id} may have reached ${provider} (sent ${state.submittingAt}), but no ref was stored before its worker stopped. It is not sent again: look for it in the provider account.`,
    });
  }
  if (state.cancelRequestedAt) return run.finish("cancelled", undefined);
  await run.set({ submittingAt: new Date().toISOString(), status: "running" });
  // Portable starts are idempotent by key: a restart before `created` finds the same job.
  const submitted =
    provider === "portable" && !request.idempotencyKey ? { ...request, idempotencyKey: id } : request;
  return env.client.research.start(submitted);
}

/** Where a run stands while its events are stored. */
interface Progress {
  seq: number;
  progressed: boolean;
  /** A retryable error and a failed `done`: stored only if the job turns out to be over. */
  unsettled: ResearchEvent[];
}

/** Stores the job's events (each with its ref), then its result. */
async function follow(env: WorkerEnv, run: Run, job: ResearchJob, progress: Progress): Promise<string> {
  const { redis, events } = env;
  const { id, keys } = run;
  // A worker that died after storing the job's `done` but before its result: the attach
  // produces `done` again (it is not a provider event the ref's cursor covers); store it once.
  const [last] = await redis.xrevrange(events.keys(id).events, "+", "-", "COUNT", 1);
  const doneStored = last !== undefined && (JSON.parse(last[1][1]!) as ResearchEvent).type === "done";
  let cancelling: Promise<unknown> | undefined;
  const cancelWatch = setInterval(async () => {
    if (cancelling || !(await redis.hget(keys.state, "cancelRequestedAt").catch(() => null))) return;
    cancelling = job.cancel().then(
      (outcome) => run.set({ cancelOutcome: JSON.stringify(outcome) }),
      () => {
        cancelling = undefined;
      },
    );
  }, env.setup.cancelPollMs ?? 500);
  try {
    for await (const event of job) {
      if (doneStored) continue;
      // A retryable failure ends this attach, not the job: its error and `done` are stored
      // only if the job turns out to be over.
      if (
        (event.type === "error" && event.error.retryable) ||
        (event.type === "done" && event.status === "failed")
      ) {
        progress.unsettled.push(event);
        continue;
      }
      let ref: unknown;
      try {
        ref = job.toRef();
      } catch {
        // Before `created` there is no ref yet.
      }
      await events.append(id, { ...event, seq: progress.seq }, ref ? { ref } : undefined);
      if (event.type === "created") {
        // So a provider's webhook (which names its own job id) can wake this job.
        await redis.set(keys.byProviderJob(run.resolved.provider, event.jobId), id, "PX", env.resultTtl);
      }
      progress.seq++;
      progress.progressed = true;
    }
    const result = await job.result();
    await cancelling;
    return await run.finish(result.status as WorkerJobStatus, result);
  } finally {
    clearInterval(cancelWatch);
  }
}

/** A run that threw: wait and wake again (held or retryable), defer, or store the failure. */
async function settleFailure(env: WorkerEnv, run: Run, error: unknown, progress: Progress): Promise<string> {
  // Redis or the job store failing is not the job failing: BullMQ runs it again, and the
  // next run attaches from the stored ref.
  if (!SondeError.isInstance(error) || error.code === "store_error") throw error;
  const { redis, backoff } = env;
  const { id, keys, state } = run;
  const held = (error as { reason?: unknown }).reason instanceof Hold;
  if (held || error.retryable) {
    // Progress clears the failure count; a retryable failure without it counts one more.
    const failures = held || progress.progressed ? 0 : state.failures + 1;
    if (failures >= MAX_RETRYABLE_FAILURES) {
      await run.set({ status: "deferred", failures });
      await run.releaseSlot();
      return "deferred";
    }
    const delay = progress.progressed
      ? backoff.minMs
      : Math.min(backoff.maxMs, Math.max(backoff.minMs, (state.backoffMs ?? backoff.minMs / 2) * 2));
    const generation = await redis.hincrby(keys.state, "wakes", 1);
    await run.set({ status: "waiting", failures, backoffMs: delay });
    await env.wakes.add("wake", { id }, { jobId: wakeJobId(id, generation), delay, ...RERUNS });
    return "waiting";
  }
  for (const event of progress.unsettled) await env.events.append(id, { ...event, seq: progress.seq++ });
  return await run.finish("failed", undefined, { code: error.code, message: error.message });
}

async function processJob(env: WorkerEnv, bull: Job<{ id: string }>, token?: string): Promise<string> {
  const run = await claim(env, bull, token);
  if (typeof run === "string") return run;
  const job = await openJob(env, run);
  if (typeof job === "string") return job;
  const progress: Progress = {
    seq: await env.redis.xlen(env.events.keys(run.id).events),
    progressed: false,
    unsettled: [],
  };
  const pollOnly = run.resolved.modelInfo.capabilities?.pollOnly === true;
  const holdTimer = pollOnly
    ? setTimeout(() => job.abort(new Hold()), env.setup.holdMs ?? 60_000)
    : undefined;
  try {
    return await follow(env, run, job, progress);
  } catch (error) {
    return await settleFailure(env, run, error, progress);
  } finally {
    clearTimeout(holdTimer);
  }
}

/**
 * The consumer side of `sonde/worker`: a BullMQ worker that runs queued research jobs (see the README, Fleets).
 * @example
 * ```ts
 * import { createResearchWorker } from "sonde/worker";
 *
 * const { close } = createResearchWorker({ redis, client, concurrency: 4, engineLimits: { hosted: 1 } });
 * process.on("SIGTERM", () => void close());
 * ```
 */
export function createResearchWorker(setup: WorkerSetup): ResearchWorker {
  const prefix = setup.prefix ?? "sonde:";
  const { redis, client } = setup;
  const queueName = setup.queueName ?? DEFAULT_QUEUE;
  const connection = (setup.connection ?? redis) as never;
  const wakes = new Queue(queueName, { connection });
  const env: WorkerEnv = {
    setup,
    prefix,
    redis,
    client,
    events: createEventLog(redis, { prefix }),
    wakes,
    limits: { hosted: 1, ...setup.engineLimits },
    backoff: setup.wakeBackoff ?? { minMs: 5_000, maxMs: 300_000 },
    resultTtl: setup.resultTtlMs ?? 7 * DAY_MS,
  };
  const worker = new Worker(
    queueName,
    (bull: Job<{ id: string }>, token?: string) => processJob(env, bull, token),
    {
      connection,
      concurrency: setup.concurrency ?? 4,
      lockDuration: setup.lockDurationMs ?? 30_000,
      // Look for stalled jobs as often as a lock can lapse, so a dead worker's jobs move on soon.
      stalledInterval: setup.lockDurationMs ?? 30_000,
      // A stalled job is safe to hand over (it attaches from its ref); never give up on it.
      maxStalledCount: 1_000_000,
    },
  );
  return {
    worker,
    async close() {
      await worker.close();
      await wakes.close();
    },
  };
}

export { researchJobId };
