/**
 * The file store's leases: `jobs/<jobId>/leases/<token>.json`, each token created exclusively,
 * so of two processes taking the same lapsed lease one wins. The fencing check reads the
 * newest token before each write: unlike the Redis store's, it is not atomic with the write.
 */
import { LeaseLostError } from "../errors.js";
import type { Fence, Lease } from "../types.js";
import type { AtomicFiles } from "./atomic-files.js";

const tokenName = (token: number) => `${String(token).padStart(10, "0")}.json`;

export class FileLeases {
  readonly #files: AtomicFiles;

  constructor(files: AtomicFiles) {
    this.#files = files;
  }

  async #dir(jobId: string): Promise<string> {
    return (await this.#files.node()).join(await this.#files.jobDir(jobId), "leases");
  }

  /** The newest lease of the job (the highest token), if any was ever taken. */
  async current(jobId: string): Promise<Lease | undefined> {
    const names = await this.#files.list(await this.#dir(jobId));
    const top = names.at(-1);
    if (!top) return undefined;
    const lease = await this.#files.read<Lease>((await this.#files.node()).join(await this.#dir(jobId), top));
    return lease ?? { holder: "", token: Number(top.slice(0, 10)), expiresAt: 0 };
  }

  /** Throws `LeaseLostError` when a fenced write's lease is no longer the newest. */
  async check(jobId: string, fence: Fence | undefined): Promise<void> {
    if (!fence) return;
    if ((await this.current(jobId))?.token !== fence.token) throw new LeaseLostError(jobId, fence.token);
  }

  async acquire(jobId: string, holder: string, ttlMs: number): Promise<Lease | undefined> {
    const current = await this.current(jobId);
    const now = Date.now();
    if (current && current.holder !== holder && current.expiresAt > now) return undefined;
    const lease: Lease = { holder, token: (current?.token ?? 0) + 1, expiresAt: now + ttlMs };
    const { join, fs } = await this.#files.node();
    const dir = await this.#dir(jobId);
    // Exclusive create: of two processes taking the same lapsed lease, one wins the token.
    if (!(await this.#files.create(join(dir, tokenName(lease.token)), lease))) return undefined;
    for (const name of await this.#files.list(dir)) {
      if (Number(name.slice(0, 10)) < lease.token - 1) await fs.rm(join(dir, name), { force: true });
    }
    return lease;
  }

  async renew(jobId: string, lease: Lease, ttlMs: number): Promise<boolean> {
    if ((await this.current(jobId))?.token !== lease.token) return false;
    const renewed = { ...lease, expiresAt: Date.now() + ttlMs };
    await this.#files.write(
      (await this.#files.node()).join(await this.#dir(jobId), tokenName(lease.token)),
      renewed,
    );
    return (await this.current(jobId))?.token === lease.token;
  }

  async release(jobId: string, lease: Lease): Promise<void> {
    if ((await this.current(jobId))?.token !== lease.token) return;
    const released = { ...lease, expiresAt: 0 };
    await this.#files.write(
      (await this.#files.node()).join(await this.#dir(jobId), tokenName(lease.token)),
      released,
    );
  }
}
