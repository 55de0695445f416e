import { LeaseLostError } from "../errors.js";
import type { Fence, JobRecord, JobStore, Lease, Receipt, StoredEvent } from "../types.js";

/** What the file store needs from an open file. */
export interface FileHandleLike {
  writeFile(data: string): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The subset of `node:fs/promises` the file store uses. Injectable so that tests can
 * simulate a crash in the middle of a write.
 */
export interface FileSystem {
  mkdir(path: string, options: { recursive: true; mode?: number }): Promise<unknown>;
  open(path: string, flags: "wx", mode?: number): Promise<FileHandleLike>;
  rename(from: string, to: string): Promise<void>;
  link(existing: string, target: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readFile(path: string, encoding: "utf8"): Promise<string>;
  readdir(path: string): Promise<string[]>;
  rm(path: string, options: { recursive?: boolean; force?: boolean }): Promise<void>;
  /**
   * Flushes a directory's entries to disk, so that a file just created or renamed in it
   * survives a power cut. @defaultValue opens the directory and fsyncs it (a no-op where
   * the platform cannot, e.g. Windows)
   */
  syncDir?(path: string): Promise<void>;
}

export interface FileStoreOptions {
  /** Directory holding the jobs; created when missing. Relative paths resolve against the cwd. */
  dir: string;
  /** @internal Replaces `node:fs/promises` (fault-injection tests). */
  fs?: FileSystem;
}

const JOB_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Directories and files the store creates are readable by their owner only. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

interface NodeDeps {
  fs: FileSystem;
  syncDir: (path: string) => Promise<void>;
  join: (...parts: string[]) => string;
  dirname: (path: string) => string;
  basename: (path: string) => string;
  hash: (text: string) => string;
  random: () => string;
}

/** Loaded on first use, so that importing Sonde never pulls Node built-ins into other runtimes. */
async function loadNode(override: FileSystem | undefined): Promise<NodeDeps> {
  const [fs, path, crypto] = await Promise.all([
    import("node:fs/promises"),
    import("node:path"),
    import("node:crypto"),
  ]);
  const syncDir = async (path: string) => {
    let handle: Awaited<ReturnType<typeof fs.open>> | undefined;
    try {
      handle = await fs.open(path, "r");
      await handle.sync();
    } catch (error) {
      // Windows cannot open or fsync a directory; there, rename is as durable as it gets.
      if (!["EISDIR", "EPERM", "EACCES", "EINVAL", "EBADF"].some((code) => isCode(error, code))) throw error;
    } finally {
      await handle?.close();
    }
  };
  return {
    fs: override ?? (fs as unknown as FileSystem),
    syncDir: override?.syncDir ? (path) => override.syncDir!(path) : syncDir,
    join: path.join,
    dirname: path.dirname,
    basename: path.basename,
    hash: (text) => crypto.createHash("sha256").update(text).digest("hex").slice(0, 40),
    random: () => crypto.randomUUID(),
  };
}

const isCode = (error: unknown, code: string) => (error as { code?: unknown } | null)?.code === code;

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
  let rootDir: Promise<string> | undefined;
  const root = async () => {
    rootDir ??= (async () => {
      const { resolve } = await import("node:path");
      return resolve(await resolveDir());
    })();
    return rootDir;
  };
  let deps: Promise<NodeDeps> | undefined;
  const node = () => {
    deps ??= loadNode(fsOverride);
    return deps;
  };
  const made = new Set<string>();

  const jobDir = async (jobId: string) => {
    if (!JOB_ID.test(jobId)) throw new Error(`Invalid portable job id ${JSON.stringify(jobId)}.`);
    const { join } = await node();
    return join(await root(), "jobs", jobId);
  };
  const ensureDir = async (dir: string) => {
    if (made.has(dir)) return;
    const { fs, dirname, syncDir } = await node();
    // Owner-only: jobs hold queries, sources and reports.
    await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
    // The new directory's own entry must be durable too, or its files vanish with it.
    await syncDir(dirname(dir));
    made.add(dir);
  };
  /**
   * Writes a sibling temp file, flushes it, runs `commit(temp)`, then flushes the directory
   * so the committed entry is durable; removes the temp file on failure.
   */
  const viaTemp = async (target: string, data: string, commit: (temp: string) => Promise<void>) => {
    const { fs, join, dirname, basename, random, syncDir } = await node();
    const dir = dirname(target);
    await ensureDir(dir);
    const temp = join(dir, `.${basename(target)}.${random()}.tmp`);
    try {
      const handle = await fs.open(temp, "wx", FILE_MODE);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await commit(temp);
      await syncDir(dir);
    } catch (error) {
      await fs.rm(temp, { force: true }).catch(() => {});
      throw error;
    }
  };
  const writeAtomic = async (target: string, value: unknown) => {
    const { fs } = await node();
    await viaTemp(target, JSON.stringify(value), (temp) => fs.rename(temp, target));
  };
  /** Creates `target` only if it does not exist; returns false when it did. */
  const createAtomic = async (target: string, value: unknown): Promise<boolean> => {
    const { fs } = await node();
    let created = true;
    await viaTemp(target, JSON.stringify(value), async (temp) => {
      try {
        await fs.link(temp, target);
      } catch (error) {
        if (!isCode(error, "EEXIST")) throw error;
        created = false;
      }
      await fs.unlink(temp);
    });
    return created;
  };
  const readJson = async <T>(path: string): Promise<T | undefined> => {
    const { fs } = await node();
    try {
      return JSON.parse(await fs.readFile(path, "utf8")) as T;
    } catch (error) {
      if (isCode(error, "ENOENT")) return undefined;
      throw error;
    }
  };
  const list = async (dir: string): Promise<string[]> => {
    const { fs } = await node();
    try {
      // Temporary files start with a dot; a crash may leave one behind.
      return (await fs.readdir(dir)).filter((name) => !name.startsWith(".") && name.endsWith(".json")).sort();
    } catch (error) {
      if (isCode(error, "ENOENT")) return [];
      throw error;
    }
  };
  const keyPath = async (key: string) => {
    const { join, hash } = await node();
    return join(await root(), "keys", `${hash(key)}.json`);
  };

  const leaseDir = async (jobId: string) => (await node()).join(await jobDir(jobId), "leases");
  const tokenName = (token: number) => `${String(token).padStart(10, "0")}.json`;
  /** The newest lease of the job (the highest token), if any was ever taken. */
  const currentLease = async (jobId: string): Promise<Lease | undefined> => {
    const names = await list(await leaseDir(jobId));
    const top = names.at(-1);
    if (!top) return undefined;
    const lease = await readJson<Lease>((await node()).join(await leaseDir(jobId), top));
    return lease ?? { holder: "", token: Number(top.slice(0, 10)), expiresAt: 0 };
  };
  const check = async (jobId: string, fence: Fence | undefined) => {
    if (!fence) return;
    if ((await currentLease(jobId))?.token !== fence.token) throw new LeaseLostError(jobId, fence.token);
  };

  const store: JobStore = {
    ...(id !== undefined && { id }),
    async putJob(record, fence) {
      const { join } = await node();
      await check(record.jobId, fence);
      await writeAtomic(join(await jobDir(record.jobId), "job.json"), record);
    },
    async getJob(jobId) {
      if (!JOB_ID.test(jobId)) return undefined;
      const { join } = await node();
      return readJson<JobRecord>(join(await jobDir(jobId), "job.json"));
    },
    async deleteJob(jobId) {
      const { fs } = await node();
      const dir = await jobDir(jobId);
      await fs.rm(dir, { recursive: true, force: true });
      for (const path of [...made]) if (path.startsWith(dir)) made.delete(path);
    },
    async appendEvent(jobId, event, fence) {
      const { join } = await node();
      await check(jobId, fence);
      const name = `${String(event.index).padStart(10, "0")}.json`;
      await createAtomic(join(await jobDir(jobId), "events", name), event);
    },
    async readEvents(jobId) {
      const { join } = await node();
      const dir = join(await jobDir(jobId), "events");
      const events: StoredEvent[] = [];
      for (const name of await list(dir)) {
        const event = await readJson<StoredEvent>(join(dir, name));
        if (event) events.push(event);
      }
      return events;
    },
    async putReceipt(jobId, receipt, fence) {
      const { join, hash } = await node();
      await check(jobId, fence);
      await writeAtomic(join(await jobDir(jobId), "receipts", `${hash(receipt.key)}.json`), receipt);
    },
    async readReceipts(jobId) {
      const { join } = await node();
      const dir = join(await jobDir(jobId), "receipts");
      const receipts: Receipt[] = [];
      for (const name of await list(dir)) {
        const receipt = await readJson<Receipt>(join(dir, name));
        if (receipt) receipts.push(receipt);
      }
      return receipts;
    },
    async claimKey(key, jobId) {
      const path = await keyPath(key);
      // A key released between our create attempt and our read is claimable again.
      for (let attempt = 0; attempt < 3; attempt++) {
        if (await createAtomic(path, { key, jobId })) return jobId;
        const owner = await readJson<{ jobId: string }>(path);
        if (owner) return owner.jobId;
      }
      throw new Error("The idempotency key is being claimed and released concurrently; try again.");
    },
    async releaseKey(key, jobId) {
      const path = await keyPath(key);
      const owner = await readJson<{ jobId: string }>(path);
      if (owner?.jobId === jobId) await (await node()).fs.rm(path, { force: true });
    },
    async acquireLease(jobId, holder, ttlMs) {
      const current = await currentLease(jobId);
      const now = Date.now();
      if (current && current.holder !== holder && current.expiresAt > now) return undefined;
      const lease: Lease = { holder, token: (current?.token ?? 0) + 1, expiresAt: now + ttlMs };
      const { join, fs } = await node();
      const dir = await leaseDir(jobId);
      // Exclusive create: of two processes taking the same lapsed lease, one wins the token.
      if (!(await createAtomic(join(dir, tokenName(lease.token)), lease))) return undefined;
      for (const name of await list(dir)) {
        if (Number(name.slice(0, 10)) < lease.token - 1) await fs.rm(join(dir, name), { force: true });
      }
      return lease;
    },
    async renewLease(jobId, lease, ttlMs) {
      if ((await currentLease(jobId))?.token !== lease.token) return false;
      const renewed = { ...lease, expiresAt: Date.now() + ttlMs };
      await writeAtomic((await node()).join(await leaseDir(jobId), tokenName(lease.token)), renewed);
      return (await currentLease(jobId))?.token === lease.token;
    },
    async releaseLease(jobId, lease) {
      if ((await currentLease(jobId))?.token !== lease.token) return;
      const released = { ...lease, expiresAt: 0 };
      await writeAtomic((await node()).join(await leaseDir(jobId), tokenName(lease.token)), released);
    },
    async deleteExpired(now) {
      const { join } = await node();
      for (const jobId of await listDirs(join(await root(), "jobs"))) {
        const record = await store.getJob(jobId);
        if (!record || Date.parse(record.expiresAt) > now.getTime()) continue;
        if (record.idempotencyKey) await store.releaseKey(record.idempotencyKey, jobId);
        await store.deleteJob(jobId);
      }
    },
  };
  const listDirs = async (dir: string): Promise<string[]> => {
    const { fs } = await node();
    try {
      return (await fs.readdir(dir)).filter((name) => JOB_ID.test(name));
    } catch (error) {
      if (isCode(error, "ENOENT")) return [];
      throw error;
    }
  };
  return store;
}
