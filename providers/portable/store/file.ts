import type { JobRecord, JobStore, Receipt, StoredEvent } from "../types.js";
import { AtomicFiles, type FileSystem, JOB_ID } from "./atomic-files.js";
import { FileLeases } from "./file-leases.js";

export type { FileHandleLike, FileSystem } from "./atomic-files.js";

export interface FileStoreOptions {
  /** Directory holding the jobs; created when missing. Relative paths resolve against the cwd. */
  dir: string;
  /** @internal Replaces `node:fs/promises` (fault-injection tests). */
  fs?: FileSystem;
}

/**
 * A job store in a directory. **Node only** (it uses `node:fs`). Every write goes to a
 * temporary file in the same directory, is flushed to disk, then renamed over its target
 * (or hard-linked, for create-only writes), so a crash leaves either the old file or the
 * new one, never a partial file; readers ignore the temporary files a crash can leave.
 * Layout: `<dir>/jobs/<jobId>/{job.json, events/<index>.json, receipts/<hash>.json}` and
 * `<dir>/keys/<hash>.json` for idempotency keys. Directories it creates are owner-only
 * (0o700) and files 0o600. Several processes may share the directory: leases
 * (`jobs/<jobId>/leases/<token>.json`, each token created exclusively) let one of them run
 * a job while the others tail it. The fencing check reads the newest token before each
 * write: unlike the Redis store's, it is not atomic with the write.
 * @example
 * ```ts
 * import { createFileStore } from "sonde/providers/portable";
 *
 * const client = new Sonde({ portable: { store: createFileStore({ dir: "./research-jobs" }) } });
 * ```
 */
export function createFileStore(options: FileStoreOptions): JobStore {
  const cwd = (globalThis as { process?: { cwd?: () => string } }).process?.cwd?.() ?? "";
  const absolute = /^([A-Za-z]:)?[\\/]/.test(options.dir) ? options.dir : `${cwd}/${options.dir}`;
  return createFileStoreAt(async () => absolute, `file:${absolute}`, options.fs);
}

/** @internal A file store whose directory is resolved on first use (default stores). */
export function createFileStoreAt(
  resolveDir: () => Promise<string>,
  id: string | undefined,
  fsOverride?: FileSystem,
): JobStore {
  const files = new AtomicFiles(resolveDir, fsOverride);
  const leases = new FileLeases(files);
  const inJob = async (jobId: string, ...parts: string[]) =>
    (await files.node()).join(await files.jobDir(jobId), ...parts);
  const keyPath = async (key: string) => {
    const { join, hash } = await files.node();
    return join(await files.root(), "keys", `${hash(key)}.json`);
  };

  const store: JobStore = {
    ...(id !== undefined && { id }),
    async putJob(record, fence) {
      await leases.check(record.jobId, fence);
      await files.write(await inJob(record.jobId, "job.json"), record);
    },
    async getJob(jobId) {
      if (!JOB_ID.test(jobId)) return undefined;
      return files.read<JobRecord>(await inJob(jobId, "job.json"));
    },
    async deleteJob(jobId) {
      await files.removeTree(await files.jobDir(jobId));
    },
    async appendEvent(jobId, event, fence) {
      await leases.check(jobId, fence);
      const name = `${String(event.index).padStart(10, "0")}.json`;
      await files.create(await inJob(jobId, "events", name), event);
    },
    async readEvents(jobId) {
      return files.readAll<StoredEvent>(await inJob(jobId, "events"));
    },
    async putReceipt(jobId, receipt, fence) {
      const { hash } = await files.node();
      await leases.check(jobId, fence);
      await files.write(await inJob(jobId, "receipts", `${hash(receipt.key)}.json`), receipt);
    },
    async readReceipts(jobId) {
      return files.readAll<Receipt>(await inJob(jobId, "receipts"));
    },
    async claimKey(key, jobId) {
      const path = await keyPath(key);
      // A key released between our create attempt and our read is claimable again.
      for (let attempt = 0; attempt < 3; attempt++) {
        if (await files.create(path, { key, jobId })) return jobId;
        const owner = await files.read<{ jobId: string }>(path);
        if (owner) return owner.jobId;
      }
      throw new Error("The idempotency key is being claimed and released concurrently; try again.");
    },
    async releaseKey(key, jobId) {
      const path = await keyPath(key);
      const owner = await files.read<{ jobId: string }>(path);
      if (owner?.jobId === jobId) await (await files.node()).fs.rm(path, { force: true });
    },
    acquireLease: (jobId, holder, ttlMs) => leases.acquire(jobId, holder, ttlMs),
    renewLease: (jobId, lease, ttlMs) => leases.renew(jobId, lease, ttlMs),
    releaseLease: (jobId, lease) => leases.release(jobId, lease),
    async deleteExpired(now) {
      const { join } = await files.node();
      for (const jobId of await files.listJobDirs(join(await files.root(), "jobs"))) {
        const record = await store.getJob(jobId);
        if (!record || Date.parse(record.expiresAt) > now.getTime()) continue;
        if (record.idempotencyKey) await store.releaseKey(record.idempotencyKey, jobId);
        await store.deleteJob(jobId);
      }
    },
  };
  return store;
}
