/**
 * Waiting for a queued job to end without polling: the worker that ends a job adds an entry
 * to the job's `ended` stream in the same MULTI as its status and result, and a waiter
 * blocks on that stream (`XREAD BLOCK`) after reading the state, so an end that lands
 * between the read and the block still wakes it.
 */
import type { Redis } from "ioredis";
import type { ResearchResult } from "../aggregate.js";
import { JobNotFoundError } from "../errors.js";
import type { BlockingConnections } from "../redis/blocking.js";
import { FINAL_STATUSES, stateKeys, stateOf, type WorkerJobState } from "./state.js";

/** A queued job that ended: its state and, if it produced one, its result. */
export interface SettledJob {
  /** `completed`, `incomplete`, `cancelled`, `failed`, `indeterminate`, or `deferred`. */
  state: WorkerJobState;
  /** Report, citations, gaps, usage (absent when the job ended without a result). */
  result?: ResearchResult;
}

export interface SettledOptions {
  /** Stops waiting (the job goes on): the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Longest single blocking read; the wait re-reads the state and blocks again until the job ends. */
const BLOCK_MS = 5_000;

export async function settledJob(
  redis: Redis,
  connections: BlockingConnections,
  prefix: string,
  id: string,
  options: SettledOptions = {},
): Promise<SettledJob> {
  const keys = stateKeys(prefix, id);
  const { signal } = options;
  for (;;) {
    signal?.throwIfAborted();
    const [[, hash], [, resultText], [, ends]] = (await redis
      .multi()
      .hgetall(keys.state)
      .get(keys.result)
      .xrevrange(keys.ended, "+", "-", "COUNT", 1)
      .exec()) as [[unknown, Record<string, string>], [unknown, string | null], [unknown, [string][]]];
    const state = stateOf(id, hash);
    if (!state)
      throw new JobNotFoundError(
        `No queued job ${id} under prefix "${prefix}": it was never enqueued here, or its state expired.`,
      );
    if (FINAL_STATUSES.includes(state.status) || state.status === "deferred")
      return { state, ...(resultText !== null && { result: JSON.parse(resultText) as ResearchResult }) };
    await blockAfter(connections, keys.ended, ends[0]?.[0] ?? "0-0", signal);
  }
}

/** Blocks until `key` has an entry after `last` (or a few seconds pass, or `signal` aborts). */
async function blockAfter(connections: BlockingConnections, key: string, last: string, signal?: AbortSignal) {
  signal?.throwIfAborted();
  const reader = connections.acquire();
  const stop = () => reader.disconnect();
  signal?.addEventListener("abort", stop, { once: true });
  let reusable = false;
  try {
    await reader.xread("BLOCK", BLOCK_MS, "STREAMS", key, last).catch((error: unknown) => {
      if (!signal?.aborted) throw error;
    });
    reusable = !signal?.aborted;
  } finally {
    signal?.removeEventListener("abort", stop);
    connections.release(reader, reusable);
  }
  signal?.throwIfAborted();
}
