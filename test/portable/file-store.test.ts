import { readFileSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFileStore, type FileSystem, type JobRecord } from "../../providers/portable/index.js";
import { ProviderJobError } from "../../src/index.js";
import {
  type ChatCall,
  collect,
  MODEL,
  portableClient,
  scriptedChat,
  scriptedFetcher,
  scriptedSearch,
  tempDir,
} from "./helpers.js";

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

/**
 * The real file system, except that the writes `crash` selects stop halfway and throw,
 * as a process killed mid-write would. With `hard`, the crashed process also never gets
 * to remove its temporary file.
 */
function crashingFs(
  crash: (path: string, data: string) => boolean,
  options: { hard: boolean },
): FileSystem & { crashed: string[] } {
  const crashed: string[] = [];
  return {
    crashed,
    mkdir: (path, o) => fsp.mkdir(path, o),
    rename: (from, to) => fsp.rename(from, to),
    link: (from, to) => fsp.link(from, to),
    unlink: (path) => fsp.unlink(path),
    readFile: (path, encoding) => fsp.readFile(path, encoding),
    readdir: (path) => fsp.readdir(path),
    rm: async (path, o) => {
      if (options.hard && crashed.some((c) => path.startsWith(c))) throw new Error("the process is gone");
      await fsp.rm(path, o);
    },
    async open(path, flags) {
      const handle = await fsp.open(path, flags);
      return {
        async writeFile(data) {
          if (crash(path, data)) {
            crashed.push(path);
            await handle.writeFile(data.slice(0, Math.floor(data.length / 2)));
            throw new Error("simulated crash: power lost mid-write");
          }
          await handle.writeFile(data);
        },
        sync: () => handle.sync(),
        close: () => handle.close(),
      };
    },
  };
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const record = (jobId: string, query: string): JobRecord => ({
  v: 1,
  jobId,
  model: MODEL,
  request: { model: MODEL, query },
  requestKey: query,
  createdAt: "2026-03-02T09:00:00.000Z",
  expiresAt: "2026-03-09T09:00:00.000Z",
  status: "queued",
});

describe("portable file store", () => {
  it("never leaves a partial file: a crash mid-write keeps the previous version, and readers skip the temp file", async () => {
    const { dir, remove } = await tempDir();
    try {
      let armed = false;
      const fs = crashingFs((path) => armed && path.includes(".tmp"), { hard: true });
      const store = createFileStore({ dir, fs });
      await store.putJob(record("pj_000000000001", "first version"));
      await store.appendEvent("pj_000000000001", {
        index: 0,
        key: "created",
        data: { type: "created" },
        at: "t",
      });

      armed = true;
      await expect(store.putJob(record("pj_000000000001", "second version"))).rejects.toThrow(
        "simulated crash",
      );
      await expect(
        store.appendEvent("pj_000000000001", {
          index: 1,
          key: "status:queued",
          data: { type: "status" },
          at: "t",
        }),
      ).rejects.toThrow("simulated crash");
      expect(fs.crashed).toHaveLength(2);

      // A new process reads the directory with a healthy file system.
      const reopened = createFileStore({ dir });
      expect((await reopened.getJob("pj_000000000001"))?.request.query).toBe("first version");
      expect(await reopened.readEvents("pj_000000000001")).toEqual([
        { index: 0, key: "created", data: { type: "created" }, at: "t" },
      ]);
      // The half-written temp files exist, only as dot-files, and every real file is whole.
      const files = await filesUnder(dir);
      const temps = files.filter((f) => /\/\.[^/]+\.tmp$/.test(f));
      expect(temps).toHaveLength(2);
      for (const temp of temps) expect(() => JSON.parse(readFileSync(temp, "utf8"))).toThrow();
      for (const file of files.filter((f) => !temps.includes(f))) {
        expect(() => JSON.parse(readFileSync(file, "utf8"))).not.toThrow();
      }
    } finally {
      await remove();
    }
  });

  it("removes its temp file when a write fails in a process that survives it", async () => {
    const { dir, remove } = await tempDir();
    try {
      const store = createFileStore({
        dir,
        fs: crashingFs((path) => path.includes("receipts"), { hard: false }),
      });
      await store.putJob(record("pj_000000000002", "q"));
      await expect(
        store.putReceipt("pj_000000000002", {
          key: "search:q",
          kind: "search",
          status: "ok",
          result: [],
          at: "t",
        }),
      ).rejects.toThrow("simulated crash");
      expect((await filesUnder(dir)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
      expect(await store.readReceipts("pj_000000000002")).toEqual([]);
    } finally {
      await remove();
    }
  });

  it("makes every write durable before it resolves: the directory entry of a new file is flushed too", async () => {
    const { dir, remove } = await tempDir();
    try {
      const log: string[] = [];
      const rel = (path: string) => path.slice(dir.length + 1).replace(/\.[^/]*\.tmp$/, "<temp>");
      const fs: FileSystem = {
        mkdir: (path, o) => fsp.mkdir(path, o),
        rename: async (from, to) => {
          await fsp.rename(from, to);
          log.push(`rename ${rel(to)}`);
        },
        link: async (from, to) => {
          await fsp.link(from, to);
          log.push(`link ${rel(to)}`);
        },
        unlink: (path) => fsp.unlink(path),
        readFile: (path, encoding) => fsp.readFile(path, encoding),
        readdir: (path) => fsp.readdir(path),
        rm: (path, o) => fsp.rm(path, o),
        open: (path, flags) => fsp.open(path, flags),
        syncDir: async (path) => {
          log.push(`syncDir ${rel(path) || "."}`);
        },
      };
      const store = createFileStore({ dir, fs });
      await store.putJob(record("pj_000000000003", "q"));
      log.push("putJob resolved");
      await store.putReceipt("pj_000000000003", { key: "search:q", kind: "search", status: "ok", at: "t" });
      log.push("putReceipt resolved");
      await store.appendEvent("pj_000000000003", { index: 0, key: "created", data: {}, at: "t" });
      log.push("appendEvent resolved");

      const syncedBefore = (entry: string, resolved: string) => {
        const at = log.indexOf(entry);
        expect(at, entry).toBeGreaterThan(-1);
        expect(at, entry).toBeLessThan(log.indexOf(resolved));
      };
      syncedBefore("syncDir jobs", "putJob resolved");
      syncedBefore("syncDir jobs/pj_000000000003", "putJob resolved");
      syncedBefore("syncDir jobs/pj_000000000003/receipts", "putReceipt resolved");
      expect(log.indexOf("syncDir jobs/pj_000000000003/receipts")).toBeGreaterThan(
        log.findIndex((e) => e.startsWith("rename jobs/pj_000000000003/receipts/")),
      );
      syncedBefore("syncDir jobs/pj_000000000003/events", "appendEvent resolved");
      expect(log.lastIndexOf("syncDir jobs/pj_000000000003/events")).toBeGreaterThan(
        log.indexOf("link jobs/pj_000000000003/events/0000000000.json"),
      );
    } finally {
      await remove();
    }
  });

  it("binds an idempotency key once when two processes race for it", async () => {
    const { dir, remove } = await tempDir();
    try {
      const a = createFileStore({ dir });
      const b = createFileStore({ dir });
      const owners = await Promise.all([
        a.claimKey("k-1", "pj_aaaaaaaaaaaa"),
        b.claimKey("k-1", "pj_bbbbbbbbbbbb"),
        a.claimKey("k-1", "pj_cccccccccccc"),
      ]);
      expect(new Set(owners).size).toBe(1);
      await a.releaseKey("k-1", "pj_zzzzzzzzzzzz"); // not the owner: no effect
      expect(await b.claimKey("k-1", "pj_dddddddddddd")).toBe(owners[0]);
      await a.releaseKey("k-1", owners[0]!);
      expect(await b.claimKey("k-1", "pj_dddddddddddd")).toBe("pj_dddddddddddd");
    } finally {
      await remove();
    }
  });

  it("refuses job ids that would escape its directory", async () => {
    const { dir, remove } = await tempDir();
    try {
      const store = createFileStore({ dir });
      expect(await store.getJob("../../etc/passwd")).toBeUndefined();
      await expect(store.readEvents("../outside")).rejects.toThrow("Invalid portable job id");
    } finally {
      await remove();
    }
  });

  it("a job whose store dies mid-run fails with a typed error, leaves only whole files, and a new process finishes it", async () => {
    const { dir, remove } = await tempDir();
    try {
      const chat = scriptedChat({
        check: (call: ChatCall) => ({
          checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
        }),
      });
      server.use(chat.handler);
      // The first search result never makes it to disk: the search was sent (its intent is
      // stored) and its outcome is lost.
      let results = 0;
      const fs = crashingFs(
        (path, data) =>
          path.includes("receipts") && data.includes('"kind":"search","status":"ok"') && ++results === 1,
        { hard: true },
      );
      const searchA = scriptedSearch();
      const first = portableClient({
        search: searchA.backend,
        fetcher: scriptedFetcher().fetcher,
        store: createFileStore({ dir, fs }),
      });
      const job = first.research.start({
        model: MODEL,
        query: "How many bicycle commuters crossed the river bridge in 2024?",
      });
      const events = await collect(job);
      const error = await job.result().catch((e: unknown) => e);
      expect(ProviderJobError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: "store_error", retryable: false });
      expect((error as Error).message).toBe(
        "portable: the job store failed (simulated crash: power lost mid-write). Everything it had acknowledged is kept; fix the store and attach the job's ref to continue.",
      );
      expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });

      const files = await filesUnder(dir);
      expect(files.filter((f) => f.endsWith(".tmp"))).toHaveLength(1);
      for (const file of files.filter((f) => !f.endsWith(".tmp"))) {
        expect(() => JSON.parse(readFileSync(file, "utf8"))).not.toThrow();
      }

      const searchB = scriptedSearch();
      const fetchB = scriptedFetcher();
      const second = portableClient({ search: searchB.backend, fetcher: fetchB.fetcher, store: { dir } });
      // That search may have been billed: sending it again takes an explicit yes.
      const resumed = second.research.attach(job.toRef(), { repeatInterruptedCalls: true });
      await collect(resumed);
      expect((await resumed.result()).status).toBe("completed");
      // Of the searches the first process made, only the one whose receipt was lost runs again;
      // the planned search it never reached runs for the first time.
      expect(chat.count("plan")).toBe(1);
      expect(searchB.queries.filter((q) => searchA.queries.includes(q))).toHaveLength(1);
      expect(new Set([...searchA.queries, ...searchB.queries]).size).toBe(
        searchA.queries.length + searchB.queries.length - 1,
      );
      expect(fetchB.urls.length).toBeGreaterThan(0);
    } finally {
      await remove();
    }
  });
});
