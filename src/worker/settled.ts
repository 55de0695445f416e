/// <reference path="../redis/lua.d.ts" />
/**
 * Waiting for a queued job to end without polling: the worker that ends a job adds an entry
 * to the job's `ended` stream in the same atomic step as its status and result, and a waiter
 * blocks on that stream (`XREAD BLOCK`) after reading the state, so an end that lands
 * between the read and the block still wakes it. The entry carries the state and result as
 * that step left them, so the waiter that it wakes returns without reading them again.
 */
import type { Redis } from "ioredis";
import type { ResearchResult } from "../aggregate.js";
import type { BlockingConnections } from "../redis/blocking.js";
import { luaScript } from "../redis/scripts.js";
import readSettledSource from "./commands/read-settled.lua";
import {
  hashOf,
  isSettled,
  jobNotFound,
  STATE_FIELDS,
  stateKeys,
  stateOf,
  type WorkerJobState,
  withFinalStatuses,
} from "./state.js";

const readSettled = luaScript(withFinalStatuses(readSettledSource));

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

const settledOf = (state: WorkerJobState, resultText: string | null | undefined): SettledJob => ({
  state,
  ...(resultText && { result: JSON.parse(resultText) as ResearchResult }),
});

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
    const [flat, resultText, lastEnded] = (await readSettled(
      redis,
      [keys.state, keys.result, keys.ended],
      [...STATE_FIELDS],
    )) as [string[], string | null, string | null];
    const state = stateOf(id, hashOf(flat));
    if (!state) throw jobNotFound(prefix, id);
    if (isSettled(state.status)) return settledOf(state, resultText);
    const entry = await blockAfter(connections, keys.ended, lastEnded ?? "0-0", signal);
    const ended = entry && endedJob(id, entry);
    if (ended) return ended;
  }
}

/**
 * The state and result an `ended` entry carries (finish-run.lua: `v 1 result <json> <hash
 * fields>`), if it is one that ends the job; an entry without them (a deferral, or a worker
 * of an earlier version) sends the waiter back to read them.
 */
function endedJob(id: string, fields: string[]): SettledJob | undefined {
  if (fields[0] !== "v" || fields[1] !== "1" || fields[2] !== "result") return undefined;
  const state = stateOf(id, hashOf(fields, 4));
  return state && isSettled(state.status) ? settledOf(state, fields[3]) : undefined;
}

/**
 * Blocks until `key` has an entry after `last` (or a few seconds pass, or `signal` aborts);
 * returns the fields of the newest entry it read.
 */
async function blockAfter(
  connections: BlockingConnections,
  key: string,
  last: string,
  signal?: AbortSignal,
): Promise<string[] | undefined> {
  signal?.throwIfAborted();
  const reader = connections.acquire();
  const stop = () => reader.disconnect();
  signal?.addEventListener("abort", stop, { once: true });
  let reusable = false;
  let entries: [string, string[]][] | undefined;
  try {
    const reply = (await reader.xread("BLOCK", BLOCK_MS, "STREAMS", key, last).catch((error: unknown) => {
      if (!signal?.aborted) throw error;
      return null;
    })) as [string, [string, string[]][]][] | null;
    entries = reply?.[0]?.[1];
    reusable = !signal?.aborted;
  } finally {
    signal?.removeEventListener("abort", stop);
    connections.release(reader, reusable);
  }
  signal?.throwIfAborted();
  return entries?.at(-1)?.[1];
}
