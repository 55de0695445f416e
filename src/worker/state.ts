/**
 * A research job's state in Redis, shared by the queue and every worker: a hash
 * (`<prefix>job:{id}`) beside the job's event stream, and its final result with a TTL.
 */
import type { ChainableCommander, Redis } from "ioredis";
import type { ResearchResult } from "../aggregate.js";
import { JobNotFoundError } from "../errors.js";
import { FINAL_JOB_STATUSES, jobKeys } from "../redis/events.js";
import type { JobRef } from "../ref.js";

/**
 * `queued` → `running` (a worker drives it) ⇄ `waiting` (a poll-only or long job between
 * wakes) → `completed` | `incomplete` | `cancelled` | `failed`; or `indeterminate` (its
 * submission may have been sent but no ref was stored: inspect the provider account) or
 * `deferred` (five consecutive retryable failures, or BullMQ gave up on its runs while it may
 * be running at the provider: it waits for `queue.resume(id)`, which sends it back to `waiting`
 * or `queued`). A submission the provider certainly did not take goes back to `queued` until
 * its next try; a request the catalog refuses when its run begins (a model retired meanwhile)
 * is `failed` with that error.
 */
export type WorkerJobStatus =
  | "queued"
  | "running"
  | "waiting"
  | "completed"
  | "incomplete"
  | "cancelled"
  | "failed"
  | "indeterminate"
  | "deferred";

/** The statuses that end a job (the event log's too: a tail ends at them). */
export const FINAL_STATUSES: readonly WorkerJobStatus[] = FINAL_JOB_STATUSES;

export interface WorkerJobState {
  id: string;
  status: WorkerJobStatus;
  /** Catalog id of the request's model. */
  model: string;
  ref?: JobRef;
  /** Set just before the submission is sent; with no ref, the submission is indeterminate. */
  submittingAt?: string;
  cancelRequestedAt?: string;
  cancelOutcome?: unknown;
  /** Consecutive retryable failures (reset by a successful poll). */
  failures: number;
  /** The next wake's delay, persisted so the backoff survives worker restarts. */
  backoffMs?: number;
  /**
   * Why it failed, is indeterminate or was deferred: the typed error's `code` (e.g.
   * `model_retired`; `worker_failed` when what failed was not a Sonde error, e.g. Redis) and
   * message. A resume drops it.
   */
  error?: { code: string; message: string };
}

export const DAY_MS = 86_400_000;

/** How long a queued job's state lives from its last write (and after its end, by default). */
export const STATE_TTL_MS = 7 * DAY_MS;

/**
 * `source` with `FINAL`, a Lua set of FINAL_STATUSES, defined in front of it: the worker's
 * scripts test a status against the same list as this module.
 */
export const withFinalStatuses = (source: string) =>
  `local FINAL = {${FINAL_STATUSES.map((status) => `['${status}'] = true`).join(", ")}}\n${source}`;

/** The statuses `queue.settled(id)` returns at: the final ones and `deferred`. */
export const isSettled = (status: WorkerJobStatus) =>
  status === "deferred" || FINAL_STATUSES.includes(status);

/**
 * How long a job's `ended` stream is kept after its last entry. It only wakes waiters: one
 * that reads the state after the end returns from the state, and one that read it just before
 * blocks within milliseconds. Its entry carries a copy of the result, so it is not kept for
 * the result's seven days.
 */
export const ENDED_TTL_MS = 60_000;

/** What `settled` and `resume` throw for an id with no state. */
export const jobNotFound = (prefix: string, id: string) =>
  new JobNotFoundError(
    `No queued job ${id} under prefix "${prefix}": it was never enqueued here, or its state expired.`,
  );

export function stateKeys(prefix: string, id: string) {
  const { state, ended } = jobKeys(prefix, id);
  return {
    state,
    result: `${prefix}result:{${id}}`,
    /** A stream holding the entry of the job's latest end (or deferral): what `settled` blocks on. */
    ended,
    slots: (provider: string) => `${prefix}slots:${provider}`,
    byProviderJob: (provider: string, jobId: string) => `${prefix}byjob:${provider}:${jobId}`,
  };
}

/**
 * Adds to `multi` the entry that wakes whoever waits for the job to end, written in the same
 * MULTI as the status, so a waiter woken by it reads the status set. (A job's final step,
 * finish-run.lua, writes one that carries the state and result too.)
 */
export function markEnded(
  multi: ChainableCommander,
  keys: ReturnType<typeof stateKeys>,
  status: WorkerJobStatus,
): void {
  multi.xadd(keys.ended, "MAXLEN", "1", "*", "status", status).pexpire(keys.ended, ENDED_TTL_MS);
}

/** A hash as HGETALL answers it inside a script (field, value, …), from index `from`. */
export function hashOf(flat: readonly string[], from = 0): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = from; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
}

export async function readState(
  redis: Redis,
  prefix: string,
  id: string,
): Promise<WorkerJobState | undefined> {
  return stateOf(id, await redis.hgetall(stateKeys(prefix, id).state));
}

/**
 * The hash fields a `WorkerJobState` is read from (stateOf): the steps that hand a state to
 * a waiter (read-settled.lua, finish-run.lua) read these, not the request (which may be large).
 */
export const STATE_FIELDS = [
  "status",
  "model",
  "ref",
  "submittingAt",
  "cancelRequestedAt",
  "cancelOutcome",
  "failures",
  "backoffMs",
  "error",
] as const;

/** A job's state from its hash (as HGETALL answers it, or the STATE_FIELDS of it), if the job was queued. */
export function stateOf(id: string, hash: Record<string, string>): WorkerJobState | undefined {
  if (!hash.status) return undefined;
  return {
    id,
    status: hash.status as WorkerJobStatus,
    model: hash.model ?? "",
    ...(hash.ref && { ref: JSON.parse(hash.ref) as JobRef }),
    ...(hash.submittingAt && { submittingAt: hash.submittingAt }),
    ...(hash.cancelRequestedAt && { cancelRequestedAt: hash.cancelRequestedAt }),
    ...(hash.cancelOutcome && { cancelOutcome: JSON.parse(hash.cancelOutcome) }),
    failures: Number(hash.failures ?? 0),
    ...(hash.backoffMs && { backoffMs: Number(hash.backoffMs) }),
    ...(hash.error && { error: JSON.parse(hash.error) }),
  };
}

export async function readResult(
  redis: Redis,
  prefix: string,
  id: string,
): Promise<ResearchResult | undefined> {
  const text = await redis.get(stateKeys(prefix, id).result);
  return text === null ? undefined : (JSON.parse(text) as ResearchResult);
}
