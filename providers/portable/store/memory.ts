import { LeaseLostError } from "../errors.js";
import type { Fence, JobRecord, JobStore, Lease, Receipt, StoredEvent } from "../types.js";

let counter = 0;

interface Entry {
  record: JobRecord | undefined;
  events: StoredEvent[];
  receipts: Map<string, Receipt>;
  lease: Lease | undefined;
  /** Highest token handed out; kept when the lease is released so tokens only grow. */
  token: number;
}

/**
 * An in-process job store. Jobs survive a new client in the same process but not a
 * restart; use `createFileStore` (or a shared store) for that. Values are copied in and
 * out, as a real store would serialize them.
 * @example
 * ```ts
 * import { createMemoryStore } from "sonde/providers/portable";
 *
 * const client = new Sonde({ portable: { store: createMemoryStore() } });
 * ```
 */
export function createMemoryStore(): JobStore {
  const jobs = new Map<string, Entry>();
  const keys = new Map<string, string>();
  const entry = (jobId: string): Entry => {
    let found = jobs.get(jobId);
    if (!found) {
      found = { record: undefined, events: [], receipts: new Map(), lease: undefined, token: 0 };
      jobs.set(jobId, found);
    }
    return found;
  };
  const check = (jobId: string, fence: Fence | undefined) => {
    if (fence && entry(jobId).token !== fence.token) throw new LeaseLostError(jobId, fence.token);
  };
  const deleteJob = async (jobId: string) => {
    jobs.delete(jobId);
    for (const [key, owner] of keys) if (owner === jobId) keys.delete(key);
  };
  return {
    id: `memory:${++counter}`,
    async putJob(record, fence) {
      check(record.jobId, fence);
      entry(record.jobId).record = structuredClone(record);
    },
    async getJob(jobId) {
      const record = jobs.get(jobId)?.record;
      return record && structuredClone(record);
    },
    deleteJob,
    async appendEvent(jobId, event, fence) {
      check(jobId, fence);
      const events = entry(jobId).events;
      if (events.some((e) => e.index === event.index)) return;
      events.push(structuredClone(event));
    },
    async readEvents(jobId) {
      return structuredClone(jobs.get(jobId)?.events ?? []).sort((a, b) => a.index - b.index);
    },
    async putReceipt(jobId, receipt, fence) {
      check(jobId, fence);
      entry(jobId).receipts.set(receipt.key, structuredClone(receipt));
    },
    async readReceipts(jobId) {
      return structuredClone([...(jobs.get(jobId)?.receipts.values() ?? [])]);
    },
    async claimKey(key, jobId) {
      const owner = keys.get(key);
      if (owner !== undefined) return owner;
      keys.set(key, jobId);
      return jobId;
    },
    async releaseKey(key, jobId) {
      if (keys.get(key) === jobId) keys.delete(key);
    },
    async acquireLease(jobId, holder, ttlMs) {
      const job = entry(jobId);
      const now = Date.now();
      if (job.lease && job.lease.holder !== holder && job.lease.expiresAt > now) return undefined;
      job.lease = { holder, token: ++job.token, expiresAt: now + ttlMs };
      return { ...job.lease };
    },
    async renewLease(jobId, lease, ttlMs) {
      const job = entry(jobId);
      if (job.token !== lease.token || job.lease?.holder !== lease.holder) return false;
      job.lease.expiresAt = Date.now() + ttlMs;
      return true;
    },
    async releaseLease(jobId, lease) {
      const job = jobs.get(jobId);
      if (job?.lease && job.token === lease.token) job.lease = undefined;
    },
    async deleteExpired(now) {
      for (const [jobId, { record }] of jobs) {
        if (record && Date.parse(record.expiresAt) <= now.getTime()) await deleteJob(jobId);
      }
    },
  };
}
