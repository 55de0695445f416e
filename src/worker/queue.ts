/// <reference path="../redis/lua.d.ts" />
/**
 * The producer side of `sonde/worker`: `enqueue` validates a research request against the
 * catalog (the same typed errors as `start()`), binds it to its idempotency key and queues
 * it once; `cancel` stores the intent first; `status`, `result` and `events` read what the
 * workers stored, from any process.
 */
import { createHash } from "node:crypto";
import { type ConnectionOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { ResearchResult } from "../aggregate.js";
import type { SondeClient } from "../client.js";
import { IdempotencyConflictError, InvalidRequestError } from "../errors.js";
import { blockingConnections } from "../redis/blocking.js";
import { createEventLog, type EventLog } from "../redis/events.js";
import { luaScript } from "../redis/scripts.js";
import type { ResearchRequest } from "../request.js";
import bindRequestSource from "./commands/bind-request.lua";
import resumeSource from "./commands/resume.lua";
import { type SettledJob, type SettledOptions, settledJob } from "./settled.js";
import {
  jobNotFound,
  readResult,
  readState,
  STATE_TTL_MS,
  stateKeys,
  type WorkerJobState,
  type WorkerJobStatus,
  withFinalStatuses,
} from "./state.js";

const bindRequest = luaScript(bindRequestSource);
const resumeJob = luaScript(withFinalStatuses(resumeSource));

export const DEFAULT_QUEUE = "sonde-research";

/** Runs of one queue entry (a job's first run, or a wake) before BullMQ gives up on it. */
export const DEFAULT_ATTEMPTS = 1_000;

/**
 * BullMQ's options for runs of one queue entry after an infrastructure failure (each attaches
 * from the stored ref; none re-submits): `attempts` in all, 500 ms apart. When they are spent,
 * the run records an honest end (worker.ts, `giveUp`).
 */
export const reruns = (attempts = DEFAULT_ATTEMPTS) => ({
  attempts,
  backoff: { type: "fixed" as const, delay: 500 },
});

/** `queue.resume(id)` of a job that is not `deferred` (it ended, or it was never deferred). */
export class JobNotDeferredError extends InvalidRequestError {
  static override readonly errorName: string = "JobNotDeferredError";
  /** The job's status, which is not `deferred`. */
  readonly jobStatus: WorkerJobStatus;
  constructor(id: string, jobStatus: WorkerJobStatus) {
    super(
      `Job ${id} is ${jobStatus}, not deferred: only a deferred job can be resumed` +
        (jobStatus === "indeterminate"
          ? " (an indeterminate job is never sent again: look for it in the provider account)."
          : "."),
    );
    this.jobStatus = jobStatus;
  }
}

/**
 * How long BullMQ keeps a finished queue entry (a research job's first run, or a wake): as
 * long as Sonde keeps the job's state, `ms`. BullMQ counts it from the entry's end and drops
 * entries past it whenever a later one finishes in the queue; until then an add under the same
 * id does nothing, which is what keeps a repeated `enqueue` from running the job again.
 */
export const keptFor = (ms: number) => {
  const age = Math.ceil(ms / 1_000);
  return { removeOnComplete: { age }, removeOnFail: { age } };
};

export interface QueueSetup {
  /** Holds the jobs' state, events and results. */
  redis: Redis;
  /** BullMQ's connection. @defaultValue `redis` */
  connection?: ConnectionOptions;
  /** A client configured like the workers' (validation only: nothing is sent). */
  client: SondeClient;
  /** BullMQ queue name. @defaultValue "sonde-research" */
  queueName?: string;
  /** Prefix of Sonde's own keys. @defaultValue "sonde:" */
  prefix?: string;
  /**
   * Runs of a job's queue entry after infrastructure failures (Redis, a worker's own setup)
   * before BullMQ gives up on it, 500 ms apart; the job then ends honestly (see the README).
   * @defaultValue 1_000
   */
  attempts?: number;
}

/** A request as it is queued: plain JSON (no signal). */
export type QueuedRequest = Omit<ResearchRequest, "signal">;

export interface EnqueuedJob {
  /** The research job's id in the queue (derived from the idempotency key). */
  id: string;
  /** False when the key had queued this request before. */
  created: boolean;
}

export interface ResearchQueue {
  enqueue(request: QueuedRequest, options: { idempotencyKey: string }): Promise<EnqueuedJob>;
  /** Stores the cancellation intent; the worker holding the job cancels it and records the outcome. */
  cancel(id: string): Promise<void>;
  /** Wakes a waiting job now instead of at its next scheduled poll (e.g. from a webhook). */
  wake(id: string): Promise<void>;
  /**
   * Brings a `deferred` job back: it waits for a wake that runs now (attaching from its
   * stored ref, or submitting a job never sent), with its failure count reset. Idempotent:
   * a job resumed before and not deferred again since answers `{ resumed: false }`. Throws
   * `JobNotFoundError` for an id never queued (or expired) and `JobNotDeferredError` for a
   * job that is not deferred (it ended, or was never deferred).
   */
  resume(id: string): Promise<{ resumed: boolean }>;
  status(id: string): Promise<WorkerJobState | undefined>;
  /** The research job id of a provider's job (e.g. an OpenAI response id from a webhook). */
  byProviderJob(provider: string, jobId: string): Promise<string | undefined>;
  /** The final result (report, citations, gaps, usage), while its TTL lasts. */
  result(id: string): Promise<ResearchResult | undefined>;
  /**
   * Resolves once the job ends (or is deferred) with its state and result: one blocking read
   * that the worker's final write wakes, no polling. Throws `JobNotFoundError` for an id
   * that was never queued (or expired); `signal` stops the wait, not the job.
   */
  settled(id: string, options?: SettledOptions): Promise<SettledJob>;
  readonly events: EventLog;
  readonly queue: Queue;
  close(): Promise<void>;
}

/** Sorted-key JSON: equal requests give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export const researchJobId = (idempotencyKey: string) =>
  `rj_${createHash("sha256").update(idempotencyKey).digest("hex").slice(0, 32)}`;

/** The wake job of a generation; one id per generation, so overlapping wakes coalesce. */
export const wakeJobId = (id: string, generation: number) => `${id}-wake-${generation}`;

/**
 * The producer side of `sonde/worker`: validates requests against the catalog and queues them once per idempotency key.
 * @example
 * ```ts
 * import { createResearchQueue } from "sonde/worker";
 *
 * const queue = createResearchQueue({ redis, client });
 * const { id } = await queue.enqueue({ model: "openai:gpt-5.5-pro", query: "…" }, { idempotencyKey: "brief-48" });
 * ```
 */
export function createResearchQueue(setup: QueueSetup): ResearchQueue {
  const prefix = setup.prefix ?? "sonde:";
  const { redis } = setup;
  const queue = new Queue(setup.queueName ?? DEFAULT_QUEUE, {
    connection: setup.connection ?? redis,
  } as never);
  const events = createEventLog(redis, { prefix });
  const waits = blockingConnections(redis);
  // BullMQ sends on `redis` itself: its add can follow the bind without waiting for it.
  const shared = setup.connection === undefined || setup.connection === redis;
  return {
    events,
    queue,
    async enqueue(request, options) {
      // Read off `options` rather than destructured: a JavaScript caller may leave it out.
      const idempotencyKey = (options as { idempotencyKey?: unknown } | undefined)?.idempotencyKey;
      if (typeof idempotencyKey !== "string" || idempotencyKey.length === 0)
        throw new InvalidRequestError(
          "enqueue needs an idempotencyKey: the same key never queues a job twice.",
        );
      if ((request as { signal?: unknown }).signal !== undefined)
        throw new InvalidRequestError(
          "A queued request is plain JSON: drop `signal` (cancel with queue.cancel(id)).",
        );
      const resolved = setup.client.research.validate(request as ResearchRequest);
      const id = researchJobId(idempotencyKey);
      const own = stateKeys(prefix, id);
      const keys = [own.state, queue.toKey(id), events.keys(id).events, own.ended];
      const now = new Date();
      const args = [
        canonicalJson(request),
        resolved.modelInfo.id,
        now.toISOString(),
        STATE_TTL_MS,
        now.getTime(),
      ];
      // BullMQ keeps one job per id while it keeps its entry (as long as Sonde keeps the
      // job's state, keptFor): a repeated add is a no-op.
      const add = () =>
        queue.add("research", { id }, { jobId: id, ...reruns(setup.attempts), ...keptFor(STATE_TTL_MS) });
      let bound: number;
      if (shared) {
        // One round trip: the add goes out right behind the bind on the same connection, so
        // Redis runs the bind first and a worker never takes a job without its state. EVAL,
        // not EVALSHA: a NOSCRIPT reload would send the bind again after the add. A request
        // that conflicts with the key's finds its job queued already: the add does nothing.
        const [answer] = await Promise.all([
          redis.eval(bindRequestSource, keys.length, ...keys, ...args),
          add(),
        ]);
        bound = Number(answer);
      } else {
        bound = Number(await bindRequest(redis, keys, args));
        if (bound >= 0 && bound !== 2) await add();
      }
      if (bound === 2) {
        // The key's earlier job expired, but BullMQ had not dropped its finished entry yet,
        // and an add under its id does nothing: drop it, then queue this job. (An entry is
        // finished by then: a run keeps its job's state alive with every write.)
        await queue.remove(id);
        await add();
      }
      if (bound < 0) {
        throw new IdempotencyConflictError(
          `idempotencyKey "${idempotencyKey}" already queued job ${id} with a different request. ` +
            "Repeat that request exactly to get the same job back, or use a new key for a new job.",
        );
      }
      return { id, created: bound >= 1 };
    },
    async cancel(id) {
      const key = stateKeys(prefix, id).state;
      await redis.hsetnx(key, "cancelRequestedAt", new Date().toISOString());
      await this.wake(id);
    },
    async wake(id) {
      const key = stateKeys(prefix, id).state;
      // Also for a wake not queued yet (the job is running): its run wakes it when it holds.
      const [[, wakes]] = (await redis
        .multi()
        .hget(key, "wakes")
        .hset(key, "wakeRequestedAt", new Date().toISOString())
        .exec()) as [[unknown, string | null]];
      const generation = Number(wakes ?? 0);
      const pending = await queue.getJob(wakeJobId(id, generation));
      if (pending && (await pending.isDelayed())) await pending.promote();
    },
    async resume(id) {
      const [answer, detail] = (await resumeJob(
        redis,
        [stateKeys(prefix, id).state],
        [new Date().toISOString()],
      )) as [number, number | string | undefined];
      if (answer === -1) throw jobNotFound(prefix, id);
      if (answer === -2) throw new JobNotDeferredError(id, detail as WorkerJobStatus);
      // The wake of the resume's generation: added again by a repeated resume until it runs
      // (an add under an id BullMQ holds does nothing), so a resume cut short still runs once.
      const generation = Number(detail);
      if (generation > 0)
        await queue.add(
          "wake",
          { id },
          { jobId: wakeJobId(id, generation), ...reruns(setup.attempts), ...keptFor(STATE_TTL_MS) },
        );
      return { resumed: answer === 1 };
    },
    status: (id) => readState(redis, prefix, id),
    async byProviderJob(provider, jobId) {
      return (await redis.get(stateKeys(prefix, "").byProviderJob(provider, jobId))) ?? undefined;
    },
    result: (id) => readResult(redis, prefix, id),
    settled: (id, options) => settledJob(redis, waits, prefix, id, options),
    async close() {
      events.close();
      waits.close();
      await queue.close();
    },
  };
}
