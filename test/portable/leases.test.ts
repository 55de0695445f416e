import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createFileStore, type JobStore } from "../../providers/portable/index.js";
import { simulateProcessExit } from "../../providers/portable/runner.js";
import type { JobRef, ResearchEvent } from "../../src/index.js";
import {
  type ChatCall,
  collect,
  gate,
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

const QUERY = "How many bicycle commuters crossed the river bridge in 2024?";
const supportAll = (call: ChatCall) => ({
  checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
});

/** The same directory as a second process sees it: its own runners, the same files. */
const asProcess = (dir: string, name: string): JobStore => ({
  ...createFileStore({ dir }),
  id: `file:${name}`,
});

const cursors = (events: ResearchEvent[]) =>
  events.flatMap((e) => (e.cursor === undefined ? [] : [e.cursor]));

describe("portable leases on the file store", () => {
  it("two processes starting the same idempotencyKey get one job, run once: the second tails the first", async () => {
    const { dir, remove } = await tempDir();
    try {
      const chat = scriptedChat({ check: supportAll });
      server.use(chat.handler);
      const [searchA, searchB] = [scriptedSearch(), scriptedSearch()];
      const [fetchA, fetchB] = [scriptedFetcher(), scriptedFetcher()];
      const a = portableClient({
        search: searchA.backend,
        fetcher: fetchA.fetcher,
        store: asProcess(dir, "A"),
      });
      const b = portableClient({
        search: searchB.backend,
        fetcher: fetchB.fetcher,
        store: asProcess(dir, "B"),
      });
      const request = { model: MODEL, query: QUERY, idempotencyKey: "bridge-2024" };
      const [jobA, jobB] = [a.research.start(request), b.research.start(request)];
      const [eventsA, eventsB] = await Promise.all([collect(jobA), collect(jobB)]);
      expect(jobA.id).toBe(jobB.id);
      // Every call was made once, by one of the two.
      expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check", "write"]);
      const queries = [...searchA.queries, ...searchB.queries];
      expect(new Set(queries).size).toBe(queries.length);
      expect(searchA.queries.length === 0 || searchB.queries.length === 0).toBe(true);
      const urls = [...fetchA.urls, ...fetchB.urls];
      expect(new Set(urls).size).toBe(urls.length);
      // Both saw the whole log exactly once and the same result.
      expect(cursors(eventsA)).toEqual(cursors(eventsB));
      expect(cursors(eventsA)).toEqual(cursors(eventsA).map((_, i) => String(i)));
      expect((await jobA.result()).report).toBe((await jobB.result()).report);
      expect((await jobA.result()).status).toBe("completed");
    } finally {
      await remove();
    }
  });

  it("a holder that dies keeps the job until its lease lapses; the next attach takes over from the receipts", async () => {
    const { dir, remove } = await tempDir();
    try {
      const stall = gate();
      const chat = scriptedChat({
        check: async (call, n) => {
          if (n === 0) {
            stall.hit();
            await new Promise((resolve) => call.signal.addEventListener("abort", resolve));
          }
          return supportAll(call);
        },
      });
      server.use(chat.handler);
      const leaseMs = 600;
      const searchA = scriptedSearch();
      const a = portableClient({
        search: searchA.backend,
        fetcher: scriptedFetcher().fetcher,
        store: asProcess(dir, "A"),
        leaseMs,
      });
      const job = a.research.start({ model: MODEL, query: QUERY });
      const seen: ResearchEvent[] = [];
      const pump = (async () => {
        for await (const event of job) seen.push(event);
      })().catch(() => {});
      await stall.reached;
      await vi.waitFor(() => expect(seen.at(-1)).toMatchObject({ type: "usage" }));
      const ref = JSON.parse(JSON.stringify(job.toRef())) as JobRef;
      const record = await createFileStore({ dir }).getJob(ref.jobId);
      // The ref carries the research deadline (180 s from admission), not the one-hour timeout.
      expect(ref.deadlineAt).toBe(record?.deadlineAt);
      job.abort();
      await pump;
      await simulateProcessExit({ keepLeases: true }); // SIGKILL: the lease is left to lapse

      const searchB = scriptedSearch();
      const fetchB = scriptedFetcher();
      const b = portableClient({
        search: searchB.backend,
        fetcher: fetchB.fetcher,
        store: asProcess(dir, "B"),
        leaseMs,
      });
      const started = Date.now();
      const attached = b.research.attach(ref, { repeatInterruptedCalls: true });
      const after = await collect(attached);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(leaseMs / 2);
      expect(searchB.queries).toEqual([]);
      expect(fetchB.urls).toEqual([]);
      expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check", "check", "write"]);
      expect(after[0]!.cursor).toBe(String(Number(ref.cursor) + 1));
      expect((await attached.result()).status).toBe("completed");
      const stored = await createFileStore({ dir }).getJob(ref.jobId);
      expect(stored?.deadlineAt).toBe(record?.deadlineAt);
    } finally {
      await remove();
    }
  });
});
