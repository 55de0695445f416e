/**
 * The consumer side of `sonde/worker`: a BullMQ worker that drives research jobs. It stores
 * the job's ref with every event it writes to the job's stream (one atomic step), so a
 * worker that takes over a stalled or dead worker's job attaches from exactly there and
 * never submits again; a job whose submission may have been sent without a stored ref is
 * `indeterminate`, never retried. Poll-only jobs give their slot back between polls
 * (delayed "wake" jobs with a persisted exponential backoff).
 */
/// <reference path="../redis/lua.d.ts" />
import { type ConnectionOptions, DelayedError, type Job, Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { SondeClient } from "../client.js";
import type { Logger } from "../provider.js";
import { redact } from "../redact.js";
import { createEventLog } from "../redis/events.js";
import { luaScript } from "../redis/scripts.js";
import type { ResearchRequest } from "../request.js";
import beginRunSource from "./commands/begin-run.lua";
import { DEFAULT_ATTEMPTS, DEFAULT_QUEUE, researchJobId } from "./queue.js";
import {
  endRefused,
  giveUp,
  JobRun,
  MAX_RETRYABLE_FAILURES,
  type RunContext,
  refusal,
  storedSoFar,
  unmark,
} from "./run.js";
import { hashOf, isSettled, STATE_TTL_MS, stateKeys, stateOf, withFinalStatuses } from "./state.js";

const beginRun = luaScript(withFinalStatuses(beginRunSource));

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
  /** This worker's name in BullMQ (a job's `processedBy`: which worker holds it). */
  name?: string;
  /** Jobs in flight across the whole fleet, per engine. @defaultValue { hosted: 1 } */
  engineLimits?: Partial<Record<string, number>>;
  /** A poll-only job gives its slot back after this long without ending. @defaultValue 60_000 */
  holdMs?: number;
  /** First and largest delay between wakes of a waiting job. @defaultValue { min: 5_000, max: 300_000 } */
  wakeBackoff?: { minMs: number; maxMs: number };
  /** How long the final result is kept. @defaultValue seven days */
  resultTtlMs?: number;
  /**
   * How often a running job looks for a stored cancellation when no write of its events told
   * it meanwhile (each write answers that too). @defaultValue 500
   */
  cancelPollMs?: number;
  /**
   * A job's events are written to its stream at most once per this interval (one round trip
   * per batch, with the ref): the first event after a quiet spell at once, the rest of a
   * burst gathered until the interval is over, so watchers see a burst this much later at
   * most. Each write costs a round trip and wake-ups on both sides whatever it holds: a longer
   * interval costs less CPU per event on dense streams. @defaultValue 20
   */
  eventBatchMs?: number;
  /** BullMQ lock: a worker silent this long is stalled and its job moves on. @defaultValue 30_000 */
  lockDurationMs?: number;
  /**
   * How long an `indeterminate` job keeps its engine slot after its submission was sent: it
   * may be running at the provider, and a fleet limit (the hosted API's one in flight) must
   * count it. @defaultValue the model's longest run (catalog `limits.maxDurationMs`)
   */
  indeterminateSlotMs?: number;
  /** Portable jobs: send again calls a dead worker left in flight (may have been billed). @defaultValue false */
  repeatInterruptedCalls?: boolean;
  /**
   * Runs of each wake entry this worker queues after infrastructure failures, before BullMQ
   * gives up on it (a job's first entry takes the queue's `attempts`). When an entry's runs are
   * spent, the job ends honestly: `deferred` if it may be running at the provider,
   * `indeterminate` if its submission may have been sent without a ref, else `failed`.
   * @defaultValue 1_000
   */
  attempts?: number;
  /**
   * Hears BullMQ's own errors (a lost Redis connection, a failed script), redacted, at `error`;
   * without it BullMQ prints them to the console.
   */
  logger?: Pick<Logger, "error">;
}

export interface ResearchWorker {
  readonly worker: Worker;
  close(): Promise<void>;
}

export { MAX_RETRYABLE_FAILURES };

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
  const context: RunContext = {
    redis,
    client,
    prefix,
    events: createEventLog(redis, { prefix }),
    wakes: new Queue(queueName, { connection }),
    limits: { hosted: 1, ...setup.engineLimits },
    backoff: setup.wakeBackoff ?? { minMs: 5_000, maxMs: 300_000 },
    resultTtlMs: setup.resultTtlMs ?? STATE_TTL_MS,
    holdMs: setup.holdMs ?? 60_000,
    cancelPollMs: setup.cancelPollMs ?? 500,
    eventBatchMs: setup.eventBatchMs ?? 20,
    indeterminateSlotMs: setup.indeterminateSlotMs,
    repeatInterruptedCalls: setup.repeatInterruptedCalls ?? false,
    attempts: setup.attempts ?? DEFAULT_ATTEMPTS,
  };

  // Engines with a fleet limit, comma-framed for begin-run.lua: their runs take a slot before
  // they mark a submission.
  const limited = `,${Object.keys(context.limits)
    .filter((engine) => context.limits[engine] !== undefined)
    .join(",")},`;

  const runJob = async (bull: Job<{ id: string }>, token?: string): Promise<string> => {
    const { id } = bull.data;
    const keys = stateKeys(prefix, id);
    // The job's state and where its stream ends, in one round trip; the same step answers any
    // wake asked for so far and, for a job never submitted, marks its submission as about to
    // be sent (what open() would do next), so the run sends it without another round trip.
    const now = new Date().toISOString();
    const [flat, tail, mark] = (await beginRun(
      redis,
      [keys.state, context.events.keys(id).events],
      [now, "1", limited],
    )) as [string[], [string, string[]][], number];
    const hash = hashOf(flat);
    const state = stateOf(id, hash);
    const requestText = hash.request;
    if (!state || !requestText) return "missing";
    if (isSettled(state.status)) return state.status;
    let marked = mark === 1;
    const request = JSON.parse(requestText) as ResearchRequest;
    const stored = storedSoFar(tail[0]);
    let resolved: ReturnType<SondeClient["research"]["validate"]>;
    try {
      resolved = client.research.validate(request);
    } catch (error) {
      // A request that no longer validates (its model retired since it was queued, …) can
      // never run: it ends failed, once, with the typed error. Nothing was sent, and the
      // mark is taken back, so that no later run calls it indeterminate.
      if (refusal(error)) return endRefused(context, state, stored, error, marked);
      if (marked) await unmark(redis, keys.state, state.status);
      throw error;
    }
    // A limited engine takes its slot before it marks (the catalog id named another engine).
    if (marked && context.limits[resolved.provider] !== undefined) {
      await unmark(redis, keys.state, state.status);
      marked = false;
    }
    const run = new JobRun(context, state, stored, request, resolved, marked ? now : undefined);
    if (!(await run.takeSlot())) {
      // Every slot is taken by jobs still in flight: look again shortly.
      await bull.moveToDelayed(Date.now() + 1_000, token);
      throw new DelayedError();
    }
    const job = await run.open();
    return typeof job === "string" ? job : run.drive(job);
  };

  const processJob = async (bull: Job<{ id: string }>, token?: string): Promise<string> => {
    try {
      return await runJob(bull, token);
    } catch (error) {
      // BullMQ runs an entry again after a failure until its attempts are spent (its own rule,
      // shouldRetryJob); after the last, no run will come: the job's state must say how it ends.
      const runs = bull.attemptsMade + 1;
      if (error instanceof DelayedError || runs < (bull.opts.attempts ?? 1)) throw error;
      try {
        await giveUp(context, bull.data.id, error, runs);
      } catch {
        // Not recorded (Redis is failing too): not given up either. The entry runs again
        // later, without spending an attempt, and tries to end the job then.
        await bull.moveToDelayed(Date.now() + 1_000, token);
        throw new DelayedError();
      }
      throw error;
    }
  };

  const worker = new Worker(queueName, processJob, {
    connection,
    ...(setup.name !== undefined && { name: setup.name }),
    concurrency: setup.concurrency ?? 4,
    lockDuration: setup.lockDurationMs ?? 30_000,
    // Look for stalled jobs as often as a lock can lapse, so a dead worker's jobs move on soon.
    stalledInterval: setup.lockDurationMs ?? 30_000,
    // A stalled job is safe to hand over (it attaches from its ref); never give up on it.
    maxStalledCount: 1_000_000,
  });
  if (setup.logger) hearErrors(setup.logger, worker, context.wakes);
  return {
    worker,
    async close() {
      await worker.close();
      context.events.close();
      await context.wakes.close();
    },
  };
}

/** BullMQ's own errors to the worker's logger, redacted (without a listener BullMQ prints them). */
function hearErrors(logger: Pick<Logger, "error">, worker: Worker, wakes: Queue): void {
  const hear = (source: string) => (error: Error) =>
    logger.error(`sonde/worker: BullMQ ${source} error`, { error: redact(error.message) });
  worker.on("error", hear("worker"));
  wakes.on("error", hear("queue"));
}

export { researchJobId };
