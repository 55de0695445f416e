import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createFileStore, createMemoryStore, type JobStore } from "../../providers/portable/index.js";
import { simulateProcessExit } from "../../providers/portable/runner.js";
import {
  IdempotencyConflictError,
  JobNotFoundError,
  type JobRef,
  type ResearchEvent,
  type ResearchJob,
} from "../../src/index.js";
import {
  type ChatCall,
  collect,
  gate,
  MODEL,
  portableClient,
  type Script,
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
const T0 = Date.parse("2026-03-02T09:00:00.000Z");
const DAY = 86_400_000;

const supportAll = (call: ChatCall) => ({
  checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
});

/** A chat endpoint whose first support check hangs until the client gives up on it. */
function stallingAtCheck(extra: Script = {}) {
  const stall = gate();
  const log: string[] = [];
  const chat = scriptedChat({
    ...extra,
    check: async (call, n) => {
      if (n === 0) {
        call.signal.addEventListener("abort", () => log.push("check call aborted"));
        stall.hit();
        await Promise.race([
          stall.opened,
          new Promise((resolve) => call.signal.addEventListener("abort", resolve)),
        ]);
      }
      return supportAll(call);
    },
  });
  return { chat, stall, log };
}

/** Runs `job` until the chat endpoint reaches the stalled check, then the process "dies". */
async function runUntilStalled(job: ResearchJob, reached: Promise<void>) {
  const events: ResearchEvent[] = [];
  const pump = (async () => {
    for await (const event of job) events.push(event);
  })().catch(() => {});
  await reached;
  // Let the events before the stall reach the consumer, then take the ref as a user would.
  await vi.waitFor(() => expect(events.at(-1)).toMatchObject({ type: "usage" }));
  const ref = JSON.parse(JSON.stringify(job.toRef())) as JobRef;
  job.abort();
  await pump;
  // abort() alone leaves the loop running (as a remote job would); the process dies here.
  await simulateProcessExit();
  return { events, ref };
}

const reportOf = (events: ResearchEvent[]) => events.map((e) => (e.type === "text" ? e.delta : "")).join("");

describe("portable durability", () => {
  it("continues after a restart from its receipts: no search, fetch or completed model call is repeated", async () => {
    const { dir, remove } = await tempDir();
    try {
      // The same job uninterrupted, for the byte-for-byte comparison.
      const baselineChat = scriptedChat({ check: supportAll });
      server.use(baselineChat.handler);
      const baseline = portableClient({
        search: scriptedSearch().backend,
        fetcher: scriptedFetcher().fetcher,
        store: createMemoryStore(),
      });
      const baselineJob = baseline.research.start({ model: MODEL, query: QUERY });
      const baselineEvents = await collect(baselineJob);
      server.resetHandlers();

      const { chat, stall } = stallingAtCheck();
      server.use(chat.handler);
      const searchA = scriptedSearch();
      const fetchA = scriptedFetcher();
      const first = portableClient({ search: searchA.backend, fetcher: fetchA.fetcher, store: { dir } });
      const job = first.research.start({ model: MODEL, query: QUERY });
      const { events: before, ref } = await runUntilStalled(job, stall.reached);
      expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check"]);

      // A new process: new client, new backends, the same directory.
      const searchB = scriptedSearch();
      const fetchB = scriptedFetcher();
      const second = portableClient({ search: searchB.backend, fetcher: fetchB.fetcher, store: { dir } });
      // The cut-off check may have been billed: sending it again takes an explicit yes.
      const attached = second.research.attach(ref, { repeatInterruptedCalls: true });
      const after = await collect(attached);
      const result = await attached.result();

      expect(searchB.queries).toEqual([]);
      expect(fetchB.urls).toEqual([]);
      expect(searchA.queries.length).toBeGreaterThan(0);
      expect(fetchA.urls.length).toBeGreaterThan(0);
      // The check that was cut off before answering is the only call made again.
      expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check", "check", "write"]);

      // Exactly once across the restart: no cursor twice, none missing, whole report.
      const cursors = [...before, ...after].flatMap((e) =>
        e.cursor === undefined ? [] : [Number(e.cursor)],
      );
      expect(cursors).toEqual(cursors.map((_, i) => i));
      expect(after[0]!.cursor).toBe(String(Number(ref.cursor) + 1));
      expect(result.status).toBe("completed");
      expect(result.report).toBe(reportOf(baselineEvents));
      expect(result.citations).toEqual((await baselineJob.result()).citations);
    } finally {
      await remove();
    }
  });

  it("does not send again a call that was in flight when the process died: it is a gap that may have been billed", async () => {
    const { dir, remove } = await tempDir();
    try {
      const { chat, stall } = stallingAtCheck();
      server.use(chat.handler);
      const first = portableClient({
        search: scriptedSearch().backend,
        fetcher: scriptedFetcher().fetcher,
        store: { dir },
      });
      const { ref } = await runUntilStalled(
        first.research.start({ model: MODEL, query: QUERY }),
        stall.reached,
      );
      const intents = (await createFileStore({ dir }).readReceipts(ref.jobId)).filter(
        (r) => r.status === "intent",
      );
      expect(intents.map((r) => r.kind)).toEqual(["model"]);

      const second = portableClient({
        search: scriptedSearch().backend,
        fetcher: scriptedFetcher().fetcher,
        store: { dir },
      });
      const attached = second.research.attach(ref);
      await collect(attached);
      const result = await attached.result();
      // plan, extract, check (cut off): the check is not sent again, and counts as a call.
      expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check"]);
      expect(result.usage.modelCalls).toBe(3);
      const gap = result.gaps.find((g) => g.detail.includes("may have been billed"));
      expect(gap).toMatchObject({ kind: "interrupted" });
      expect(gap!.detail).toContain("repeatInterruptedCalls");
      expect(result.status).toBe("incomplete");
      // A second recovery replays the same decision instead of reconsidering it.
      const receipts = await createFileStore({ dir }).readReceipts(ref.jobId);
      expect(receipts.filter((r) => r.status === "intent")).toEqual([]);
    } finally {
      await remove();
    }
  });

  it("abort() only stops the stream: the job runs on in the process, and get() and attach see it finish", async () => {
    const store = createMemoryStore();
    const chat = scriptedChat({ check: supportAll });
    server.use(chat.handler);
    const client = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    for await (const event of job) if (event.type === "created") break;
    const ref = job.toRef();
    await vi.waitFor(async () => expect((await client.research.get(ref)).status).toBe("completed"));
    const snapshot = await client.research.get(ref);
    expect(snapshot.report).toMatch(/^# /);
    expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check", "write"]);
    const attached = client.research.attach(ref);
    expect((await attached.result()).report).toBe(snapshot.report);
  });

  it("keeps its original deadline across a restart: past it, attach renders a partial report with no new call", async () => {
    const { dir, remove } = await tempDir();
    try {
      let now = T0;
      const { chat, stall } = stallingAtCheck();
      server.use(chat.handler);
      const first = portableClient({
        search: scriptedSearch().backend,
        fetcher: scriptedFetcher().fetcher,
        store: { dir },
        clock: () => new Date(now),
      });
      const { ref } = await runUntilStalled(
        first.research.start({ model: MODEL, query: QUERY }),
        stall.reached,
      );
      const record = await createFileStore({ dir }).getJob(ref.jobId);
      expect(record?.deadlineAt).toBe(new Date(T0 + 180_000).toISOString());

      // 181 s later, a fresh deadline would still allow the check; the original one does not.
      now = T0 + 181_000;
      const search = scriptedSearch();
      const fetch = scriptedFetcher();
      const callsBefore = chat.count();
      const second = portableClient({
        search: search.backend,
        fetcher: fetch.fetcher,
        store: { dir },
        clock: () => new Date(now),
      });
      const attached = second.research.attach(ref);
      const events = await collect(attached);
      const result = await attached.result();

      expect(chat.count()).toBe(callsBefore);
      // Usage counts plan and extract, and the cut-off check: it may have been billed.
      expect(result.usage.modelCalls).toBe(3);
      expect(search.queries).toEqual([]);
      expect(fetch.urls).toEqual([]);
      expect(result.status).toBe("incomplete");
      expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
      expect(result.gaps).toContainEqual({
        kind: "deadline",
        detail: "The deadline (180 s from the start of execution) passed; no new call was made after it.",
      });
      expect(result.report).toMatch(
        /^# Partial report: .*\n\nThis report is partial: its deadline of 180 s passed\./,
      );
      expect(result.report).toContain("## Quoted but not yet checked for support");
      // Quoted exactly, but the deadline came before the support check: cited, not verified.
      expect(result.citations.length).toBeGreaterThan(0);
      expect(result.citations.every((c) => c.verified === false)).toBe(true);
      expect(result.gaps).toContainEqual({
        kind: "deadline",
        detail: expect.stringMatching(
          /^\d+ finding\(s\) quote their sources exactly but were not checked for support \(its deadline of 180 s passed\): their citations are marked verified: false\.$/,
        ),
      });
    } finally {
      await remove();
    }
  });

  it("returns the existing job for the same idempotencyKey and request, and refuses another request under it", async () => {
    const { dir, remove } = await tempDir();
    try {
      const chat = scriptedChat({ check: supportAll });
      server.use(chat.handler);
      const client = portableClient({
        search: scriptedSearch().backend,
        fetcher: scriptedFetcher().fetcher,
        store: { dir },
      });
      const request = { model: MODEL, query: QUERY, idempotencyKey: "bridge-report-7" };
      // Twice at once (a retried submit racing the first).
      const a = client.research.start(request);
      const b = client.research.start(request);
      const [eventsA, eventsB] = await Promise.all([collect(a), collect(b)]);
      expect(a.id).toMatch(/^pj_/);
      expect(b.id).toBe(a.id);
      expect(reportOf(eventsB)).toBe(reportOf(eventsA));
      const calls = chat.count();
      expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check", "write"]);

      // Again later, from another client on the same store: the same job, no new call.
      const later = portableClient({
        search: scriptedSearch().backend,
        fetcher: scriptedFetcher().fetcher,
        store: { dir },
      });
      const c = later.research.start(request);
      await collect(c);
      expect(c.id).toBe(a.id);
      expect(chat.count()).toBe(calls);

      const conflicting = later.research.start({ ...request, query: "Something else entirely?" });
      const events = await collect(conflicting);
      const error = await conflicting.result().catch((e: unknown) => e);
      expect(IdempotencyConflictError.isInstance(error)).toBe(true);
      expect((error as Error).message).toBe(
        `portable: idempotencyKey "bridge-report-7" already started job ${a.id} with a different request. Repeat that request exactly to get the same job back, or use a new key for a new job.`,
      );
      expect(events.map((e) => e.type)).toEqual(["error", "done"]);
      expect(chat.count()).toBe(calls);
    } finally {
      await remove();
    }
  });

  it("stores the cancellation intent before stopping local work; a re-attached cancelled job ends cancelled", async () => {
    const log: string[] = [];
    const inner = createMemoryStore();
    // A store that notes when the intent becomes durable.
    const store: JobStore = {
      ...inner,
      id: inner.id,
      async putJob(record) {
        await inner.putJob(record);
        if (record.cancelRequestedAt && !log.length) log.push("cancel intent stored");
      },
    };
    const { chat, stall, log: chatLog } = stallingAtCheck();
    server.use(chat.handler);
    const client = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events: ResearchEvent[] = [];
    const pump = (async () => {
      for await (const event of job) events.push(event);
    })();
    await stall.reached;
    await vi.waitFor(() => expect(job.id).toBeDefined());

    const outcome = await job.cancel();
    await pump;
    expect(outcome).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect([...log, ...chatLog]).toEqual(["cancel intent stored", "check call aborted"]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    expect((await store.getJob(job.id!))?.cancelRequestedAt).toBeDefined();

    // Another process attaches: the stored log ends cancelled; nothing runs again.
    await simulateProcessExit();
    const calls = chat.count();
    const other = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
    });
    const ref = job.toRef();
    const attached = await collect(other.research.attach({ ...ref, cursor: undefined }));
    expect(attached.filter((e) => e.type === "status").at(-1)).toMatchObject({ status: "cancelled" });
    expect(attached.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    expect(chat.count()).toBe(calls);
    expect(await other.research.cancel(ref)).toEqual({
      outcome: "already-terminal",
      finalStatus: "cancelled",
    });
  });

  it("stops a job running in another worker on a shared store before its next call", async () => {
    const shared = createMemoryStore();
    // The same storage as seen from a second worker process.
    const elsewhere: JobStore = { ...shared, id: "memory:other-worker" };
    const { chat, stall } = stallingAtCheck();
    server.use(chat.handler);
    const worker = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store: shared,
    });
    const job = worker.research.start({ model: MODEL, query: QUERY });
    const done = collect(job);
    await stall.reached;
    await vi.waitFor(() => expect(job.id).toBeDefined());

    const other = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store: elsewhere,
    });
    const outcome = await other.research.cancel(job.toRef());
    expect(outcome.outcome).toBe("pending");
    expect(outcome.detail).toContain("stops it before its next call");

    stall.open(); // the check in flight finishes; the write is never sent
    const events = await done;
    expect(events.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check"]);
  });

  it("ends a job cancelled when its stored intent outlived the process that wrote it", async () => {
    const store = createMemoryStore();
    const { chat, stall } = stallingAtCheck();
    server.use(chat.handler);
    const first = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
    });
    const { ref } = await runUntilStalled(
      first.research.start({ model: MODEL, query: QUERY }),
      stall.reached,
    );
    // The cancel wrote its intent and the process died before anything else.
    const record = (await store.getJob(ref.jobId))!;
    await store.putJob({ ...record, cancelRequestedAt: new Date().toISOString() });

    const calls = chat.count();
    const second = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
    });
    const events = await collect(second.research.attach(ref));
    expect(events.map((e) => e.type)).toEqual(["status", "done"]);
    expect(events[0]).toMatchObject({ status: "cancelled" });
    expect(chat.count()).toBe(calls);
  });

  it("expires jobs and their receipts seven days after creation, by the client's clock", async () => {
    let now = T0;
    const clock = () => new Date(now);
    const store = createMemoryStore();
    const chat = scriptedChat({ check: supportAll });
    server.use(chat.handler);
    const client = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
      clock,
    });
    const job = client.research.start({ model: MODEL, query: QUERY, idempotencyKey: "weekly-1" });
    await collect(job);
    const ref = job.toRef();
    expect((await store.readReceipts(ref.jobId)).length).toBeGreaterThan(0);

    now = T0 + 6 * DAY;
    expect(await client.research.get(ref)).toMatchObject({ status: "completed", jobId: ref.jobId });

    now = T0 + 7 * DAY + 1_000;
    expect(() => client.research.attach(ref)).toThrow(JobNotFoundError);
    const error = await client.research.get(ref).catch((e: unknown) => e);
    expect(JobNotFoundError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("expired on 2026-03-09T09:00:00.000Z");
    expect(await store.getJob(ref.jobId)).toBeUndefined();
    expect(await store.readReceipts(ref.jobId)).toEqual([]);

    // The key is free again: the same request starts a new job.
    const again = client.research.start({ model: MODEL, query: QUERY, idempotencyKey: "weekly-1" });
    await collect(again);
    expect(again.id).not.toBe(ref.jobId);
  });

  it("reports a finished job through get() and replays it on attach without running anything", async () => {
    const store = createMemoryStore();
    const chat = scriptedChat({ check: supportAll });
    server.use(chat.handler);
    const client = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);
    const result = await job.result();
    const calls = chat.count();

    const snapshot = await client.research.get(job.toRef());
    expect(snapshot).toMatchObject({ provider: "portable", status: "completed", report: result.report });
    expect(snapshot.usage).toMatchObject({ modelCalls: calls });

    const replay = client.research.attach({ ...job.toRef(), cursor: "5" });
    const replayed = await collect(replay);
    expect(replayed[0]!.cursor).toBe("6");
    expect((await replay.result()).report).toBe(result.report);
    expect(replayed.filter((e) => e.type !== "done").length).toBe(
      events.filter((e) => e.type !== "done").length - 6,
    );
    expect(chat.count()).toBe(calls);
  });
});
