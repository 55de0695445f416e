/**
 * A portable-engine job store in Redis, shared by every process that uses the same Redis:
 * each job's record (a string), its events (a Redis Stream, entry id `0-<index + 1>`), its
 * receipts (a hash) and its lease (a hash plus a token counter) expire with the job, seven
 * days after creation. Every write of a runner is fenced in Lua: refused once another
 * runner took the lease.
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type {
  Fence,
  JobRecord,
  JobStore,
  Lease,
  Receipt,
  StoredEvent,
} from "../../providers/portable/types.js";
import { runScript } from "./scripts.js";

/** Seven days, the portable engine's retention (ARCHITECTURE.md, "The portable engine"). */
const RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface RedisStoreOptions {
  /** Prefix of every key this store writes. @defaultValue "sonde:" */
  prefix?: string;
}

/** A fenced write refused: another runner holds the job's lease. Recognised by name. */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
  constructor(jobId: string, token: number) {
    super(`portable: the lease on job ${jobId} (token ${token}) was taken over by another runner.`);
  }
}

/** The key names of one job; the `{jobId}` hash tag keeps them in one Redis Cluster slot. */
export function jobKeys(prefix: string, jobId: string) {
  const tag = `{${jobId}}`;
  return {
    job: `${prefix}pjob:${tag}`,
    events: `${prefix}pevents:${tag}`,
    receipts: `${prefix}preceipts:${tag}`,
    lease: `${prefix}please:${tag}`,
    token: `${prefix}ptoken:${tag}`,
  };
}

const fenceArg = (fence: Fence | undefined) => (fence ? String(fence.token) : "");

/**
 * `createRedisStore(redis, { prefix })`: pass it as `portable.store` to every client that
 * should share jobs. Many processes may attach to one job: one runs it, the others tail it.
 * @example
 * ```ts
 * import { Redis } from "ioredis";
 * import { createRedisStore } from "sonde/redis";
 *
 * const client = new Sonde({ portable: { store: createRedisStore(new Redis("redis://127.0.0.1:6379")) } });
 * ```
 */
export function createRedisStore(redis: Redis, options: RedisStoreOptions = {}): JobStore {
  const prefix = options.prefix ?? "sonde:";
  const keysOf = (jobId: string) => jobKeys(prefix, jobId);
  const idempotencyKey = (key: string) =>
    `${prefix}pkey:${createHash("sha256").update(key).digest("hex").slice(0, 40)}`;
  const fenced = async <T>(jobId: string, fence: Fence | undefined, write: () => Promise<T>) => {
    try {
      return await write();
    } catch (error) {
      if (String((error as Error)?.message).includes("LEASE_LOST"))
        throw new LeaseLostError(jobId, fence!.token);
      throw error;
    }
  };

  return {
    id: `redis:${prefix}`,
    async putJob(record, fence) {
      const k = keysOf(record.jobId);
      const expireAt = Date.parse(record.expiresAt) || Date.now() + RETENTION_MS;
      await fenced(record.jobId, fence, () =>
        runScript(
          redis,
          "fencedSet",
          [k.job, k.token, k.events, k.receipts, k.lease],
          [fenceArg(fence), JSON.stringify(record), expireAt],
        ),
      );
    },
    async getJob(jobId) {
      const text = await redis.get(keysOf(jobId).job);
      return text === null ? undefined : (JSON.parse(text) as JobRecord);
    },
    async deleteJob(jobId) {
      const k = keysOf(jobId);
      await redis.del(k.job, k.events, k.receipts, k.lease, k.token);
    },
    async appendEvent(jobId, event, fence) {
      const k = keysOf(jobId);
      await fenced(jobId, fence, () =>
        runScript(
          redis,
          "appendEvent",
          [k.events, k.token, k.job],
          [fenceArg(fence), event.index, JSON.stringify(event)],
        ),
      );
    },
    async readEvents(jobId) {
      const entries = await redis.xrange(keysOf(jobId).events, "-", "+");
      return entries.map(([, fields]) => JSON.parse(fields[1]!) as StoredEvent);
    },
    async putReceipt(jobId, receipt, fence) {
      const k = keysOf(jobId);
      await fenced(jobId, fence, () =>
        runScript(
          redis,
          "putReceipt",
          [k.receipts, k.token, k.job],
          [fenceArg(fence), receipt.key, JSON.stringify(receipt)],
        ),
      );
    },
    async readReceipts(jobId) {
      const all = await redis.hgetall(keysOf(jobId).receipts);
      return Object.values(all).map((text) => JSON.parse(text) as Receipt);
    },
    async claimKey(key, jobId) {
      const name = idempotencyKey(key);
      // A key released between our SET NX and our GET is claimable again.
      for (let attempt = 0; attempt < 3; attempt++) {
        if ((await redis.set(name, jobId, "PX", RETENTION_MS, "NX")) === "OK") return jobId;
        const owner = await redis.get(name);
        if (owner !== null) return owner;
      }
      throw new Error("The idempotency key is being claimed and released concurrently; try again.");
    },
    async releaseKey(key, jobId) {
      await runScript(redis, "releaseKey", [idempotencyKey(key)], [jobId]);
    },
    // Redis expires the keys itself (PEXPIREAT at the job's expiresAt).
    async deleteExpired() {},
    async acquireLease(jobId, holder, ttlMs) {
      const k = keysOf(jobId);
      const granted = (await runScript(redis, "acquireLease", [k.lease, k.token, k.job], [holder, ttlMs])) as
        | [number, string]
        | null;
      if (!granted) return undefined;
      return { holder, token: Number(granted[0]), expiresAt: Number(granted[1]) } satisfies Lease;
    },
    async renewLease(jobId, lease, ttlMs) {
      const k = keysOf(jobId);
      return (await runScript(redis, "renewLease", [k.lease, k.token], [lease.token, ttlMs])) === 1;
    },
    async releaseLease(jobId, lease) {
      const k = keysOf(jobId);
      await runScript(redis, "renewLease", [k.lease, k.token], [lease.token, 0]);
    },
  };
}
