/**
 * The iterator of a job (src/job-events.ts) over an engine that hands over a network read's
 * wire events together: the events, their order, `toRef()` at each one, and what a consumer
 * that stops, aborts or overlaps its pulls gets, are exactly those of a job that reads one
 * wire event at a time.
 */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { JobAbortedError, StreamInterruptedError } from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";
import type { EngineSession, WireEvent } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { collectEvents, type FakeScript, fakeJob, fakeSession, script } from "../helpers/fake-engine.js";

/** The fake engine, with its wire events handed over `size` at a time (one network read each). */
function batchedSession(fake: FakeScript, size: number): EngineSession {
  const session = fakeSession(fake);
  const connect = session.connect.bind(session);
  session.connect = async function* (options) {
    let batch: WireEvent[] = [];
    for await (const wire of connect(options)) {
      batch.push(wire as WireEvent);
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  };
  return session;
}

const strip = ({ rawEvent: _raw, ...event }: ResearchEvent) => event;
const clock = () => new Date("2026-06-01T00:00:00Z");

/** Every event with the ref taken right after it was delivered. */
async function eventsAndRefs(job: ResearchJob): Promise<{ event: ResearchEvent; ref?: JobRef }[]> {
  const seen: { event: ResearchEvent; ref?: JobRef }[] = [];
  for await (const event of job) seen.push({ event, ...(job.id && { ref: job.toRef() }) });
  return seen;
}

describe("a job iterated over batched reads", () => {
  it("delivers what one-at-a-time reads deliver, with the same toRef() after every event", async () => {
    const fake = { events: script(40) };
    const single = await eventsAndRefs(fakeJob(fakeSession(fake), { clock }));
    for (const size of [2, 7, 100]) {
      const batched = await eventsAndRefs(fakeJob(batchedSession(fake, size), { clock }));
      expect(batched.map(({ event, ref }) => ({ event: strip(event), ref }))).toEqual(
        single.map(({ event, ref }) => ({ event: strip(event), ref })),
      );
    }
  });

  it.each([
    ["from the start", false],
    ["after created(), which pulled the first events", true],
  ])("next() calls made without awaiting get every event once, in order (%s)", async (_, early) => {
    // Events before `created`, so that created() pulls several.
    const fake: FakeScript = {
      events: [{ kind: "text", value: "a " }, { kind: "text", value: "b " }, ...script(30)],
    };
    const expected = (await collectEvents(fakeJob(fakeSession(fake)))).map(strip);
    const job = fakeJob(batchedSession(fake, 5));
    if (early) await job.created();
    const iterator = job[Symbol.asyncIterator]();
    const pulls = Array.from({ length: expected.length + 3 }, () => iterator.next());
    const results = await Promise.all(pulls);
    expect(results.slice(0, expected.length).map((r) => strip(r.value as ResearchEvent))).toEqual(expected);
    expect(results.slice(expected.length).every((r) => r.done)).toBe(true);
  });

  it("a consumer that stops mid-read closes the connection: the job is left attachable, nothing more is delivered", async () => {
    const job = fakeJob(batchedSession({ events: script(30) }, 50));
    let seen = 0;
    for await (const event of job) {
      seen++;
      if (event.type === "text" && event.delta === "w5 ") break;
    }
    const error = await job.result().catch((e: unknown) => e);
    expect(JobAbortedError.isInstance(error)).toBe(true);
    expect((error as JobAbortedError).reason).toBe("the event stream was closed by its consumer");
    expect(job.toRef().cursor).toBeDefined();
    expect(seen).toBeGreaterThan(5);
  });

  it.each([
    ["its iterator's return()", (job: ResearchJob) => job[Symbol.asyncIterator]().return?.()],
    [
      "a Readable.from(job) destroyed before it was read",
      (job: ResearchJob) => void Readable.from(job).destroy(),
    ],
  ])(
    "a consumer that closes before its first pull (%s): nothing is sent, result() rejects",
    async (_, close) => {
      const session = fakeSession({ events: script(5) });
      const job = fakeJob(session);
      await close(job);
      // Before, result() never settled: the drive never ran, so nothing ended the job.
      const outcome = await Promise.race([
        job.result().then(
          () => "resolved",
          (error: unknown) => error,
        ),
        new Promise((resolve) => setTimeout(() => resolve("pending"), 500)),
      ]);
      expect(JobAbortedError.isInstance(outcome)).toBe(true);
      expect(outcome).toMatchObject({
        reason: "the event stream was closed by its consumer",
        jobState: "never-sent",
      });
      expect(session.connects).toEqual([]);
    },
  );

  it("abort() between two events of one read: the next pull throws the abort, no later event", async () => {
    const job = fakeJob(batchedSession({ events: script(30) }, 50));
    const delivered: ResearchEvent[] = [];
    const thrown = await (async () => {
      for await (const event of job) {
        delivered.push(event);
        if (event.type === "text" && event.delta === "w3 ") job.abort("enough");
      }
    })().catch((e: unknown) => e);
    expect(JobAbortedError.isInstance(thrown)).toBe(true);
    expect(delivered.at(-1)).toMatchObject({ type: "text", delta: "w3 " });
    expect(delivered.some((event) => event.type === "done")).toBe(false);
  });

  it("a mapping failure mid-read ends the job after the events before it, with one error and one done", async () => {
    const session = batchedSession({ events: script(20) }, 50);
    const map = session.map.bind(session);
    session.map = (wire) => {
      const mapped = map(wire);
      if (mapped[0]?.type === "text" && mapped[0].delta === "w9 ") throw new Error("mapper broke");
      return mapped;
    };
    const events = await collectEvents(fakeJob(session));
    const texts = events.filter((event) => event.type === "text").map((event) => event.delta);
    expect(texts).toEqual(Array.from({ length: 9 }, (_, i) => `w${i} `));
    expect(events.filter((event) => event.type === "error")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "done" });
    expect(events.filter((event) => event.type === "done")).toHaveLength(1);
    for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBe(events[i - 1]!.seq + 1);
  });
});

describe("a retryable error thrown while mapping (after the network read that brought the event)", () => {
  // The read's events were pulled, so they count as seen: resuming from the last one mapped
  // skipped the rest of the read as repeats (before: "w9 " and the rest of its read were lost,
  // without an error). A throw while mapping is not a drop: the job ends, attachable at the
  // event that failed, and nothing is sent again.
  const failingAt = (fake: FakeScript, delta: string, failures = Number.POSITIVE_INFINITY) => {
    const session = fakeSession(fake);
    const map = session.map.bind(session);
    let thrown = 0;
    session.map = (wire) => {
      const mapped = map(wire);
      if (mapped[0]?.type === "text" && mapped[0].delta === delta && thrown++ < failures)
        throw new StreamInterruptedError("the mapper failed", { provider: "openai" });
      return mapped;
    };
    return session;
  };
  const texts = (events: ResearchEvent[]) =>
    events.flatMap((event) => (event.type === "text" ? [event.delta] : []));
  const whole = script(20);
  const before = Array.from({ length: 9 }, (_, i) => `w${i} `);
  const after = Array.from({ length: 11 }, (_, i) => `w${i + 9} `);

  for (const opaque of [false, true])
    for (const failures of [1, Number.POSITIVE_INFINITY])
      it(`${opaque ? "opaque" : "ranked"} cursors, failing ${failures === 1 ? "once" : "every time"}: ends the job, its ref resumes at that event`, async () => {
        const fake: FakeScript = { events: whole, batch: 8, opaque };
        const session = failingAt(fake, "w9 ", failures);
        const job = fakeJob(session);
        const events = await collectEvents(job);
        expect(session.connects).toHaveLength(1);
        expect(texts(events)).toEqual(before);
        expect(events.filter((event) => event.type === "error")).toEqual([
          expect.objectContaining({
            error: expect.objectContaining({ code: "stream_interrupted", retryable: true }),
          }),
        ]);
        expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
        const rest = await collectEvents(fakeJob(fakeSession(fake), { ref: job.toRef() }));
        expect(texts(rest)).toEqual(after);
      });

  it("result() alone: the same end, the partial report up to the event that failed", async () => {
    const fake: FakeScript = { events: whole, batch: 8 };
    const session = failingAt(fake, "w9 ");
    const job = fakeJob(session);
    const error = await job.result().catch((e: unknown) => e);
    expect(StreamInterruptedError.isInstance(error)).toBe(true);
    expect((error as StreamInterruptedError).partial?.report).toBe(before.join(""));
    expect(session.connects).toHaveLength(1);
    const rest = await fakeJob(fakeSession(fake), { ref: job.toRef() }).result();
    expect(rest.report).toBe(whole.flatMap((event) => (event.kind === "text" ? [event.value] : [])).join(""));
  });
});

describe("created() before iterating, on an engine that sends events before `created`", () => {
  it("the ref taken at each of those events, attached, delivers exactly the events after it", async () => {
    // Allowed by the adapter spec (no order is asked of `created`): created() pulls them first.
    const fake: FakeScript = {
      events: [
        { kind: "text", value: "a " },
        { kind: "text", value: "b " },
        { kind: "text", value: "c " },
        ...script(6),
      ],
    };
    const job = fakeJob(batchedSession(fake, 4), { clock });
    await job.created();
    const seen = await eventsAndRefs(job);
    const texts = (events: ResearchEvent[]) => events.filter((e) => e.type === "text").map((e) => e.delta);
    expect(texts(seen.map(({ event }) => event)).slice(0, 3)).toEqual(["a ", "b ", "c "]);
    for (const [i, { event, ref }] of seen.entries()) {
      if (!ref || event.type === "done") continue;
      const rest = await collectEvents(fakeJob(batchedSession(fake, 4), { clock, ref }));
      // Before, a ref taken at "a " pointed past `created`: attached, it lost "b " and "c ".
      expect(texts(rest), `ref after event ${i}`).toEqual(texts(seen.slice(i + 1).map(({ event }) => event)));
    }
  });
});

describe("a job whose ref binding (the credential tag) is still being computed when its id arrives", () => {
  const slowBind = (log: string[]) => (jobId: string) =>
    new Promise<{ credential: string }>((resolve) =>
      setTimeout(() => {
        log.push("bound");
        resolve({ credential: `h1.tag-of-${jobId}` });
      }, 20),
    );

  it("iterated: `created` waits for it, so toRef() works the moment `created` is delivered", async () => {
    const log: string[] = [];
    const session = batchedSession({ events: script(10) }, 100);
    const job = fakeJob(session, { bind: slowBind(log) });
    for await (const event of job) {
      if (event.type !== "created") continue;
      expect(log).toEqual(["bound"]);
      expect(job.toRef().credential).toBe("h1.tag-of-job_1");
    }
  });

  it("result() alone: the read goes on meanwhile, and the result and the ref carry the id and tag", async () => {
    const log: string[] = [];
    const session = batchedSession({ events: script(10) }, 100);
    const map = session.map.bind(session);
    session.map = (wire) => {
      log.push("mapped");
      return map(wire);
    };
    const job = fakeJob(session, { bind: slowBind(log) });
    const result = await job.result();
    // Everything was mapped before the binding was ready: nobody could see the job mid-read.
    expect(log.indexOf("bound")).toBe(log.length - 1);
    expect(result.jobId).toBe("job_1");
    expect(result.report).toBe(Array.from({ length: 10 }, (_, i) => `w${i} `).join(""));
    expect(job.toRef()).toMatchObject({ jobId: "job_1", credential: "h1.tag-of-job_1" });
  });
});
