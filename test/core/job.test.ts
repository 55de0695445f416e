import { describe, expect, it } from "vitest";
import {
  JobAbortedError,
  JobNotCreatedError,
  StreamConsumedError,
  StreamInterruptedError,
} from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import type { EngineSession, MappedEvent, WireEvent } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { collectEvents, type FakeScript, fakeJob, fakeSession, script } from "../helpers/fake-engine.js";

const job = fakeJob;
const collect = collectEvents;

const reportOf = (events: ResearchEvent[]) => events.map((e) => (e.type === "text" ? e.delta : "")).join("");

describe("ResearchJob delivery", () => {
  const baseline = async (s: FakeScript) => collect(job(fakeSession({ ...s, dropAfter: [] })));

  it("delivers every event once, in order, with strictly increasing seq and one final done", async () => {
    const events = await collect(job(fakeSession({ events: script(20) })));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(events.filter((e) => e.type === "done")).toHaveLength(1);
    expect(reportOf(events)).toBe(Array.from({ length: 20 }, (_, i) => `w${i} `).join(""));
  });

  it("drops the overlap a resume re-sends (ranked cursors): nothing twice, nothing lost", async () => {
    const s: FakeScript = { events: script(60), dropAfter: [10, 7, 25], overlap: 5 };
    const expected = await baseline(s);
    const session = fakeSession(s);
    const events = await collect(job(session));
    expect(session.connects.length).toBe(4);
    expect(reportOf(events)).toBe(reportOf(expected));
    expect(events.map((e) => e.type)).toEqual(expected.map((e) => e.type));
    expect(new Set(events.map((e) => e.seq)).size).toBe(events.length);
  });

  it("drops the overlap with opaque cursors too", async () => {
    const s: FakeScript = { events: script(40), dropAfter: [9, 9, 9], overlap: 4, opaque: true };
    const expected = await baseline(s);
    const events = await collect(job(fakeSession(s)));
    expect(reportOf(events)).toBe(reportOf(expected));
    expect(events.map((e) => e.type)).toEqual(expected.map((e) => e.type));
  });

  it("drops the overlap with opaque cursors in batches, a replay longer than a batch included", async () => {
    // Resumes re-send 12 events in reads of 8: a read of repeats only, then one that starts
    // with repeats and goes on with new events.
    for (const overlap of [3, 8, 12]) {
      const s: FakeScript = { events: script(80), dropAfter: [20, 17, 30], overlap, opaque: true, batch: 8 };
      const expected = await baseline({ ...s, batch: undefined });
      const session = fakeSession(s);
      const events = await collect(job(session));
      expect(session.connects.length).toBe(4);
      expect(reportOf(events)).toBe(reportOf(expected));
      expect(events.map((e) => e.type)).toEqual(expected.map((e) => e.type));
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    }
  });

  it("opaque cursors: a reconnection's first read that puts something new before what it repeats", async () => {
    // The session yields, on reconnecting, a notice with a new cursor and then the replay,
    // in one array (its first read), or one by one: the same report either way.
    const session = (batched: boolean): EngineSession => {
      let connects = 0;
      let known: string | undefined;
      const all: WireEvent[] = [
        { cursor: "c", data: "created" },
        ...Array.from({ length: 6 }, (_, i) => ({ cursor: `t${i}`, data: `w${i} ` })),
        { cursor: "end", data: "end" },
      ];
      return {
        get jobId() {
          return known;
        },
        resumable: true,
        resumeState: () => ({}),
        async *connect() {
          const n = connects++;
          const events =
            n === 0 ? all.slice(0, 4) : [{ cursor: `hello${n}`, data: "hello" }, ...all.slice(2)];
          if (batched) yield events;
          else yield* events;
          if (n === 0) throw new StreamInterruptedError("drop");
        },
        map(wire): MappedEvent[] {
          if (wire.data === "created") {
            known = "job_1";
            return [{ type: "created", jobId: "job_1", provider: "openai", model: "openai:gpt-5.5-pro" }];
          }
          if (wire.data === "hello") return [{ type: "status", status: "running" }];
          if (wire.data === "end") return [{ type: "status", status: "completed" }];
          return [{ type: "text", delta: wire.data as string }];
        },
      };
    };
    const one = await job(session(false)).result();
    expect(one.report).toBe("w0 w1 w2 w3 w4 w5 ");
    expect((await job(session(true)).result()).report).toBe(one.report);
  });

  it("gives up after the retry budget when a connection never makes progress", async () => {
    const s: FakeScript = { events: script(10), dropAfter: [3, 0, 0, 0, 0, 0] };
    const j = job(fakeSession(s));
    const events = await collect(j);
    expect(events.at(-2)).toMatchObject({
      type: "error",
      error: { code: "stream_interrupted", retryable: true },
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
    const error = await j.result().catch((e) => e);
    expect(StreamInterruptedError.isInstance(error)).toBe(true);
    expect(error.partial.report).toBe("w0 w1 ");
  });

  it("ends a non-resumable stream that drops as incomplete, with what arrived, and never reconnects", async () => {
    const session = fakeSession({ events: script(10), dropAfter: [5], resumable: false });
    const j = job(session);
    const events = await collect(j);
    expect(session.connects).toHaveLength(1);
    expect(events.at(-2)).toMatchObject({ type: "error", error: { retryable: false } });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
    const error = await j.result().catch((e) => e);
    expect(error.partial.report).toBe("w0 w1 w2 w3 ");
  });

  it("aggregates: result() without iterating, same promise each time, citations deduplicated", async () => {
    const j = job(fakeSession({ events: script(30) }));
    const first = j.result();
    expect(j.result()).toBe(first);
    const result = await first;
    expect(result.status).toBe("completed");
    expect(result.citations.map((c) => c.url)).toEqual([
      "https://example.org/0?utm_source=openai",
      "https://example.org/1?utm_source=openai",
      "https://example.org/2?utm_source=openai",
    ]);
    expect(result.usage).toMatchObject({
      inputTokens: 1000,
      outputTokens: 100,
      searches: 3,
      costSource: "estimate",
    });
    // 1000 × $30/M + 100 × $180/M + 3 × $10/1000
    expect(result.usage.costUSD).toBeCloseTo(0.03 + 0.018 + 0.03, 9);
    expect(() => j[Symbol.asyncIterator]()).toThrow(StreamConsumedError);
  });

  it("lets a for-await that starts right after result() take the stream", async () => {
    const j = job(fakeSession({ events: script(5) }));
    const pending = j.result();
    const events = await collect(j);
    expect((await pending).report).toBe(reportOf(events));
  });

  it("a consumer that stops at done, at a drop's error or at the terminal status still gets result()", async () => {
    // Settles within 500 ms or fails the test (a pending result() would hang the caller forever).
    const settled = <T>(promise: Promise<T>) =>
      Promise.race([
        promise.then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        ),
        new Promise<{ pending: true }>((resolve) => setTimeout(() => resolve({ pending: true }), 500)),
      ]);

    const atDone = job(fakeSession({ events: script(5) }));
    for await (const event of atDone) if (event.type === "done") break;
    expect(await settled(atDone.result())).toMatchObject({ value: { status: "completed" } });

    const dropped = job(fakeSession({ events: script(10), dropAfter: [5], resumable: false }));
    for await (const event of dropped) if (event.type === "error") break;
    const failure = (await settled(dropped.result())) as { error?: StreamInterruptedError };
    expect(StreamInterruptedError.isInstance(failure.error)).toBe(true);
    expect(failure.error?.partial).toMatchObject({ report: "w0 w1 w2 w3 ", status: "incomplete" });

    // The job is over once its terminal status is seen: not "aborted, still running remotely".
    const atStatus = job(fakeSession({ events: script(5) }));
    for await (const event of atStatus) if (event.type === "status" && event.status === "completed") break;
    expect(await settled(atStatus.result())).toMatchObject({ value: { status: "completed" } });
    expect(await atStatus.cancel()).toMatchObject({ outcome: "already-terminal" });
  });

  it("a second for-await throws StreamConsumedError", async () => {
    const j = job(fakeSession({ events: script(3) }));
    await collect(j);
    await expect(collect(j)).rejects.toBeInstanceOf(StreamConsumedError);
  });

  it("toRef() before created throws JobNotCreatedError; after, it is plain JSON", async () => {
    const j = job(fakeSession({ events: script(3) }));
    expect(() => j.toRef()).toThrow(JobNotCreatedError);
    for await (const event of j) {
      if (event.type === "created") {
        const ref = j.toRef();
        expect(JSON.parse(JSON.stringify(ref))).toEqual(ref);
        expect(ref).toMatchObject({ v: 1, provider: "openai", jobId: "job_1" });
      }
    }
  });

  it("attach from a ref taken mid-batch delivers exactly the rest: the two halves equal one uninterrupted run", async () => {
    const s: FakeScript = { events: script(25) };
    const expected = await baseline(s);
    for (const stopAt of [0, 1, 2, 3, 10, expected.length - 3]) {
      const first = job(fakeSession(s));
      const before: ResearchEvent[] = [];
      let ref: JobRef | undefined;
      for await (const event of first) {
        before.push(event);
        if (before.length === stopAt + 1) {
          ref = JSON.parse(JSON.stringify(first.toRef()));
          break;
        }
      }
      await expect(first.result()).rejects.toBeInstanceOf(JobAbortedError);
      const second = job(fakeSession(s), { ref: ref! });
      const after = await collect(second);
      const strip = (e: ResearchEvent) => ({ ...e, seq: 0 });
      expect([...before, ...after].map(strip)).toEqual(expected.map(strip));
      expect((await second.result()).report).toBe(reportOf(expected));
    }
  });

  it("abort() tears down the transport: iteration and result reject with JobAbortedError, no done", async () => {
    const j = job(fakeSession({ events: script(50) }));
    const seen: ResearchEvent[] = [];
    await expect(
      (async () => {
        for await (const event of j) {
          seen.push(event);
          if (seen.length === 4) j.abort("user changed their mind");
        }
      })(),
    ).rejects.toSatisfy((e) => JobAbortedError.isInstance(e));
    expect(seen.some((e) => e.type === "done")).toBe(false);
    await expect(j.result()).rejects.toSatisfy((e) => JobAbortedError.isInstance(e));
  });

  it("cancel() mid-stream ends with status cancelled and done cancelled", async () => {
    const j = job(fakeSession({ events: script(50) }));
    const seen: ResearchEvent[] = [];
    for await (const event of j) {
      seen.push(event);
      if (seen.length === 5)
        expect(await j.cancel()).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    }
    expect(seen.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    expect((await j.result()).status).toBe("cancelled");
  });

  it("cancel() after a drop ended the stream still asks the provider: the remote job may be running", async () => {
    const asked: JobRef[] = [];
    const cancel = async (ref: JobRef) => {
      asked.push(ref);
      return { outcome: "cancelled" as const, finalStatus: "cancelled" as const };
    };
    const j = job(fakeSession({ events: script(10), dropAfter: [5], resumable: false }), { cancel });
    await j.result().catch(() => {});
    expect(j.status).toBe("incomplete");
    expect(await j.cancel()).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect(asked.map((ref) => ref.jobId)).toEqual(["job_1"]);
    // The remote job is cancelled now, not merely interrupted.
    expect(j.status).toBe("cancelled");

    // Once the provider itself reported the end, there is nothing to cancel.
    const done = job(fakeSession({ events: script(3) }), { cancel });
    await done.result();
    expect(await done.cancel()).toEqual({ outcome: "already-terminal", finalStatus: "completed" });
    expect(asked).toHaveLength(1);
  });

  it("a provider failure rejects result() with the provider's code and keeps the partial report", async () => {
    const events = script(3);
    events.splice(3, 0, { kind: "error", value: "The server had an error" });
    const j = job(fakeSession({ events }));
    const seen = await collect(j);
    expect(seen.at(-1)).toMatchObject({ type: "done", status: "failed" });
    const error = await j.result().catch((e) => e);
    expect(error).toMatchObject({ code: "job_failed", providerCode: "server_error" });
    expect(error.partial.report).toBe("w0 w1 ");
  });

  it("the request's signal aborts like abort(); timeoutMs expiry rejects with code timeout", async () => {
    const controller = new AbortController();
    const slow = (): EngineSession => {
      const session = fakeSession({ events: script(50) });
      const connect = session.connect.bind(session);
      return Object.assign(session, {
        async *connect(options: Parameters<EngineSession["connect"]>[0]) {
          for await (const wire of connect(options)) {
            await new Promise((r) => setTimeout(r, 5));
            yield wire;
          }
        },
      });
    };
    const aborted = job(slow(), { signal: controller.signal });
    setTimeout(() => controller.abort("navigated away"), 20);
    const error = await aborted.result().catch((e) => e);
    expect(JobAbortedError.isInstance(error) && error.code).toBe("aborted");
    expect((error as JobAbortedError).reason).toBe("navigated away");

    const late = await job(slow(), { timeoutMs: 30 })
      .result()
      .catch((e) => e);
    expect(JobAbortedError.isInstance(late) && late.code).toBe("timeout");
  });
});

describe("created on attach", () => {
  it("a replayed created is not delivered again: it came before any ref could be taken", async () => {
    // An engine whose wire has no cursors (e.g. polling) replays the job from its creation.
    const session: EngineSession = {
      jobId: "job_1",
      resumable: true,
      resumeState: () => ({}),
      async *connect() {
        yield { data: "created" };
        yield { data: "text" };
        yield { data: "completed" };
      },
      map: (wire) =>
        wire.data === "created"
          ? [{ type: "created", jobId: "job_1", provider: "openai", model: "openai:gpt-5.5-pro" }]
          : wire.data === "text"
            ? [{ type: "text", delta: "report" }]
            : [{ type: "status", status: "completed" }],
    };
    const ref: JobRef = {
      v: 1,
      provider: "openai",
      model: "openai:gpt-5.5-pro",
      jobId: "job_1",
      createdAt: new Date().toISOString(),
      resume: {},
    };
    const events = await collect(job(session, { ref }));
    expect(events.map((e) => e.type)).toEqual(["text", "status", "done"]);
  });
});

describe("snapshot wire events on attach", () => {
  // An engine whose replay is refused after a restart: it answers with one final snapshot.
  const snapshotSession = (cursor: string | undefined): EngineSession => ({
    jobId: "job_1",
    resumable: true,
    cursorRank: (c) => (Number.isFinite(Number(c)) ? Number(c) : undefined),
    resumeState: () => ({}),
    async *connect() {
      yield { cursor, snapshot: true, data: "final" };
    },
    map: () => [
      { type: "text", delta: "rest of the report" },
      { type: "citation", citation: { url: "https://example.org/a" } },
      { type: "citation", citation: { url: "https://example.org/b" } },
      { type: "status", status: "completed" },
    ],
  });
  const ref = (cursor: string, cursorOffset?: number): JobRef => ({
    v: 1,
    provider: "openai",
    model: "openai:gpt-5.5-pro",
    jobId: "job_1",
    cursor,
    ...(cursorOffset && { cursorOffset }),
    createdAt: new Date().toISOString(),
    resume: {},
  });

  it("a snapshot under another cursor ends suppression: everything in it is delivered", async () => {
    const events = await collect(job(snapshotSession("final"), { ref: ref("41") }));
    expect(events.map((e) => e.type)).toEqual(["text", "citation", "citation", "status", "done"]);
  });

  it("a snapshot under the ref's own cursor resumes after the events already delivered from it", async () => {
    const events = await collect(job(snapshotSession("final"), { ref: ref("final", 2) }));
    expect(events.map((e) => e.type)).toEqual(["citation", "status", "done"]);
  });
});

describe("a job attached from a ref, before it runs", () => {
  it("gives back the same ref, its deadline included", () => {
    const ref = {
      ...fakeJobRef(),
      deadlineAt: "2026-06-01T01:00:00.000Z",
    };
    const job = fakeJob(fakeSession({ events: script(3) }), { ref });
    expect(job.toRef()).toEqual(ref);
  });
});

function fakeJobRef(): JobRef {
  return {
    v: 1,
    provider: "openai",
    model: "openai:gpt-5.5-pro",
    jobId: "job_1",
    cursor: "4",
    createdAt: "2026-06-01T00:00:00.000Z",
    resume: { fake: true },
  };
}
