/**
 * The file store's disk discipline: every write goes to a temporary sibling, is flushed, then
 * renamed (or hard-linked, for create-only writes) over its target, and the directory is
 * flushed, so a crash leaves the old file or the new one, never a partial one. Node built-ins
 * load on first use, so importing Sonde never pulls them into other runtimes.
 */

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

export const JOB_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** Directories and files the store creates are readable by their owner only. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

export interface NodeDeps {
  fs: FileSystem;
  syncDir: (path: string) => Promise<void>;
  join: (...parts: string[]) => string;
  dirname: (path: string) => string;
  basename: (path: string) => string;
  hash: (text: string) => string;
  random: () => string;
}

export const isCode = (error: unknown, code: string) => (error as { code?: unknown } | null)?.code === code;

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

/** Atomic JSON files under one root directory, resolved on first use. */
export class AtomicFiles {
  readonly #resolveDir: () => Promise<string>;
  readonly #fsOverride: FileSystem | undefined;
  #rootDir: Promise<string> | undefined;
  #deps: Promise<NodeDeps> | undefined;
  /** Directories known to exist (and to be durable), so each is made once. */
  readonly #made = new Set<string>();

  constructor(resolveDir: () => Promise<string>, fsOverride?: FileSystem) {
    this.#resolveDir = resolveDir;
    this.#fsOverride = fsOverride;
  }

  root(): Promise<string> {
    this.#rootDir ??= (async () => {
      const { resolve } = await import("node:path");
      return resolve(await this.#resolveDir());
    })();
    return this.#rootDir;
  }

  node(): Promise<NodeDeps> {
    this.#deps ??= loadNode(this.#fsOverride);
    return this.#deps;
  }

  async jobDir(jobId: string): Promise<string> {
    if (!JOB_ID.test(jobId)) throw new Error(`Invalid portable job id ${JSON.stringify(jobId)}.`);
    const { join } = await this.node();
    return join(await this.root(), "jobs", jobId);
  }

  /** Removes a directory tree, and forgets that its directories exist. */
  async removeTree(dir: string): Promise<void> {
    const { fs } = await this.node();
    await fs.rm(dir, { recursive: true, force: true });
    for (const path of [...this.#made]) if (path.startsWith(dir)) this.#made.delete(path);
  }

  async #ensureDir(dir: string): Promise<void> {
    if (this.#made.has(dir)) return;
    const { fs, dirname, syncDir } = await this.node();
    // Owner-only: jobs hold queries, sources and reports.
    await fs.mkdir(dir, { recursive: true, mode: DIR_MODE });
    // The new directory's own entry must be durable too, or its files vanish with it.
    await syncDir(dirname(dir));
    this.#made.add(dir);
  }

  /**
   * Writes a sibling temp file, flushes it, runs `commit(temp)`, then flushes the directory
   * so the committed entry is durable; removes the temp file on failure.
   */
  async #viaTemp(target: string, data: string, commit: (temp: string) => Promise<void>): Promise<void> {
    const { fs, join, dirname, basename, random, syncDir } = await this.node();
    const dir = dirname(target);
    await this.#ensureDir(dir);
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
  }

  async write(target: string, value: unknown): Promise<void> {
    const { fs } = await this.node();
    await this.#viaTemp(target, JSON.stringify(value), (temp) => fs.rename(temp, target));
  }

  /** Creates `target` only if it does not exist; returns false when it did. */
  async create(target: string, value: unknown): Promise<boolean> {
    const { fs } = await this.node();
    let created = true;
    await this.#viaTemp(target, JSON.stringify(value), async (temp) => {
      try {
        await fs.link(temp, target);
      } catch (error) {
        if (!isCode(error, "EEXIST")) throw error;
        created = false;
      }
      await fs.unlink(temp);
    });
    return created;
  }

  async read<T>(path: string): Promise<T | undefined> {
    const { fs } = await this.node();
    try {
      return JSON.parse(await fs.readFile(path, "utf8")) as T;
    } catch (error) {
      if (isCode(error, "ENOENT")) return undefined;
      throw error;
    }
  }

  /** The JSON files of a directory, sorted; none when it does not exist. */
  async list(dir: string): Promise<string[]> {
    const { fs } = await this.node();
    try {
      // Temporary files start with a dot; a crash may leave one behind.
      return (await fs.readdir(dir)).filter((name) => !name.startsWith(".") && name.endsWith(".json")).sort();
    } catch (error) {
      if (isCode(error, "ENOENT")) return [];
      throw error;
    }
  }

  /** Every file of a directory parsed, in name order (unreadable ones left out). */
  async readAll<T>(dir: string): Promise<T[]> {
    const { join } = await this.node();
    const out: T[] = [];
    for (const name of await this.list(dir)) {
      const value = await this.read<T>(join(dir, name));
      if (value) out.push(value);
    }
    return out;
  }

  /** The job directories under `dir`. */
  async listJobDirs(dir: string): Promise<string[]> {
    const { fs } = await this.node();
    try {
      return (await fs.readdir(dir)).filter((name) => JOB_ID.test(name));
    } catch (error) {
      if (isCode(error, "ENOENT")) return [];
      throw error;
    }
  }
}
