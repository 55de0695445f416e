import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/index.js";
import { createEventLog, eventStreamResponse } from "../../src/redis/index.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const event = (seq: number, last = false): ResearchEvent =>
  (last
    ? { type: "done", seq, status: "completed" }
    : { type: "text", seq, delta: `word${seq} ` }) as ResearchEvent;

async function* iterate<T>(stream: ReadableStream<T>): AsyncGenerator<T> {
  const reader = stream.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** A web endpoint serving one job's events, as an app would mount it. */
async function endpoint(log: ReturnType<typeof createEventLog>, jobId: string) {
  const server: Server = createServer(async (req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const response = eventStreamResponse(log, jobId, {
      headers: { get: (name) => (req.headers[name.toLowerCase()] as string | undefined) ?? null },
      signal: controller.signal,
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    for await (const chunk of iterate(response.body!)) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe("tailing a job's events from anywhere", () => {
  it("an async iterable resumes after a given seq: exactly once, same seq, live until done", async () => {
    const writer = createEventLog(redis.client(), { prefix: "tail1:" });
    const reader = createEventLog(redis.client(), { prefix: "tail1:" });
    for (let seq = 0; seq < 5; seq++) expect(await writer.append("j1", event(seq))).toBe(true);
    expect(await writer.append("j1", event(2))).toBe(false);
    const seen: number[] = [];
    const tail = (async () => {
      for await (const e of reader.tail("j1", { after: 1 })) seen.push(e.seq);
    })();
    for (let seq = 5; seq < 10; seq++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      await writer.append("j1", event(seq, seq === 9));
    }
    await tail;
    expect(seen).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("appendMany stores a batch in one step, byte for byte, skipping seqs stored before", async () => {
    const log = createEventLog(redis.client(), { prefix: "tail4:" });
    const deltas = ["line\nbreak", 'quote " and \\', "\u2028 sep", "emoji 👩‍🔬 🇪🇺", "한국어 évaluation", ""];
    const batch = deltas.map((delta, seq) => ({ type: "text", seq, delta }) as ResearchEvent);
    expect(await log.appendMany("j4", batch.slice(0, 2))).toBe(2);
    // A batch that repeats stored seqs (a writer that retried) stores only the new ones.
    expect(await log.appendMany("j4", batch)).toBe(4);
    expect(await log.appendMany("j4", batch.slice(3))).toBe(0);
    // The engine's raw payload stays with the process that got it.
    const raw = { ...event(6, true), rawEvent: { type: "response.completed" } } as ResearchEvent;
    expect(await log.appendMany("j4", [raw])).toBe(1);
    expect(await log.read("j4")).toEqual([...batch, event(6, true)]);
    // One stream entry per step, not per event (Redis does one XADD per batch).
    expect(await redis.client().xlen("tail4:events:{j4}")).toBe(3);
    const tailed: ResearchEvent[] = [];
    for await (const e of log.tail("j4", { after: 2 })) tailed.push(e);
    expect(tailed.map((e) => e.seq)).toEqual([3, 4, 5, 6]);
    log.close();
  });

  it("a tail that ended gives its connection to the next one: no connection set up per tail", async () => {
    const writer = createEventLog(redis.client(), { prefix: "tail3:" });
    const reader = createEventLog(redis.client(), { prefix: "tail3:" });
    const admin = redis.client();
    const connections = async () =>
      Number(/total_connections_received:(\d+)/.exec(await admin.info("stats"))![1]);
    const aborted = new AbortController();
    for (const job of ["a", "b", "c", "d"]) await writer.append(job, event(0, true));
    for await (const _ of reader.tail("a"));
    const before = await connections();
    for await (const _ of reader.tail("b"));
    for await (const e of reader.tail("c")) if (e.seq === 0) break;
    expect(await connections()).toBe(before);
    // An interrupted read's connection is closed, never handed to another tail.
    const live = (async () => {
      for await (const _ of reader.tail("never-written", { signal: aborted.signal }));
    })();
    await new Promise((resolve) => setTimeout(resolve, 50));
    aborted.abort(new Error("stop"));
    await expect(live).rejects.toThrow("stop");
    for await (const _ of reader.tail("d"));
    expect(await connections()).toBe(before + 1);
    reader.close();
  });

  it("serves text/event-stream; a browser that drops and reconnects with Last-Event-ID gets every event once", async () => {
    const log = createEventLog(redis.client(), { prefix: "tail2:" });
    const { server, url } = await endpoint(createEventLog(redis.client(), { prefix: "tail2:" }), "j2");
    try {
      for (let seq = 0; seq < 4; seq++) await log.append("j2", event(seq));
      const received: { id: string; seq: number }[] = [];
      const ends: { id: string | undefined; data: unknown }[] = [];
      const read = async (lastEventId: string | undefined, stopAfter: number) => {
        const controller = new AbortController();
        const response = await fetch(url, {
          headers: lastEventId ? { "last-event-id": lastEventId } : {},
          signal: controller.signal,
        });
        expect(response.headers.get("content-type")).toBe("text/event-stream");
        const messages = response
          .body!.pipeThrough(new TextDecoderStream())
          .pipeThrough(new EventSourceParserStream());
        let count = 0;
        try {
          for await (const message of iterate(messages)) {
            if (message.event === "end") {
              ends.push({ id: message.id, data: JSON.parse(message.data) });
              continue;
            }
            received.push({ id: message.id!, seq: (JSON.parse(message.data) as ResearchEvent).seq });
            if (++count === stopAfter) {
              controller.abort(); // the connection drops
              break;
            }
          }
        } catch {
          // the aborted read
        }
        return received.at(-1)?.id;
      };
      const last = await read(undefined, 3);
      expect(last).toBe("2");
      // Written while nobody was connected, and after the reconnect.
      for (let seq = 4; seq < 7; seq++) await log.append("j2", event(seq));
      const writing = (async () => {
        for (let seq = 7; seq < 10; seq++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          await log.append("j2", event(seq, seq === 9));
        }
      })();
      await read(last, Number.POSITIVE_INFINITY);
      await writing;
      expect(received.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(received.map((r) => r.id)).toEqual(received.map((r) => String(r.seq)));
      // After `done`, one last event says how the job ended; it carries no id, so a browser's
      // Last-Event-ID stays at the last research event.
      expect(ends).toEqual([{ id: undefined, data: { status: "completed" } }]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

/** What sonde/worker writes when a job ends without `done`: the status, then an `ended` entry. */
const endWithoutDone = (prefix: string, jobId: string, status: string, error?: unknown) =>
  redis
    .client()
    .multi()
    .hset(`${prefix}job:{${jobId}}`, { status, ...(error !== undefined && { error: JSON.stringify(error) }) })
    .xadd(`${prefix}ended:{${jobId}}`, "MAXLEN", "1", "*", "status", status)
    .exec();

/** Iterates a tail to its end: the events it yielded and its return value. */
async function drain(tail: AsyncGenerator<ResearchEvent, unknown>) {
  const events: ResearchEvent[] = [];
  for (let next = await tail.next(); ; next = await tail.next()) {
    if (next.done) return { events, end: next.value };
    events.push(next.value);
  }
}

describe("a job that ends without `done`", () => {
  const lost = {
    code: "indeterminate_submission",
    message: "It may have reached the provider: look for it in the provider account.",
  };

  it("tails from other connections end after its last stored event once its state is final, and say how", async () => {
    const prefix = "tail5:";
    const writer = createEventLog(redis.client(), { prefix });
    const reader = createEventLog(redis.client(), { prefix });
    for (let seq = 0; seq < 3; seq++) await writer.append("j5", event(seq));
    // Live tails, blocked before the end; one resumes after seq 0.
    const live = [drain(reader.tail("j5")), drain(reader.tail("j5", { after: 0 }))];
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The last events, then the final state without `done` (the worker's order: events first).
    await writer.appendMany("j5", [event(3), event(4)]);
    await endWithoutDone(prefix, "j5", "indeterminate", lost);
    const [all, resumed] = await Promise.all(live);
    expect(all!.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(resumed!.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    for (const { end } of [all!, resumed!]) expect(end).toEqual({ status: "indeterminate", error: lost });
    // After the end: what is left after the resume point, then the end at once.
    const later = await drain(reader.tail("j5", { after: 3 }));
    expect(later.events.map((e) => e.seq)).toEqual([4]);
    expect(await drain(reader.tail("j5", { after: 4 }))).toEqual({
      events: [],
      end: { status: "indeterminate", error: lost },
    });
    // No events at all (cancelled before it started): the tail ends with the state.
    const none = drain(reader.tail("j6"));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await endWithoutDone(prefix, "j6", "cancelled");
    expect(await none).toEqual({ events: [], end: { status: "cancelled" } });
    // A deferred job is not over (it goes on when resumed): its tail says so, once, and stays open.
    await endWithoutDone(prefix, "j7", "deferred");
    const stopped = new AbortController();
    const told: unknown[] = [];
    const open = drain(
      reader.tail("j7", { signal: stopped.signal, blockMs: 50, onDeferred: (state) => told.push(state) }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    stopped.abort(new Error("still open"));
    await expect(open).rejects.toThrow("still open");
    expect(told).toEqual([{ status: "deferred" }]);
    reader.close();
  });

  it("a final state recorded without an `ended` entry (it expired, an older writer) ends a quiet tail at its next look", async () => {
    const prefix = "tail6:";
    const log = createEventLog(redis.client(), { prefix });
    await log.append("j", event(0));
    const tail = drain(log.tail("j", { blockMs: 100 }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await redis.client().hset(`${prefix}job:{j}`, "status", "failed");
    const { events, end } = await tail;
    expect(events.map((e) => e.seq)).toEqual([0]);
    expect(end).toEqual({ status: "failed" });
    log.close();
  });

  it("text/event-stream says when the job is deferred and stays open; it ends once the job, resumed, ends", async () => {
    const prefix = "tail8:";
    const log = createEventLog(redis.client(), { prefix });
    const { server, url } = await endpoint(createEventLog(redis.client(), { prefix }), "j8");
    const failure = { code: "provider_unavailable", message: "hosted 503: unavailable" };
    try {
      await log.append("j8", event(0));
      await endWithoutDone(prefix, "j8", "deferred", failure);
      const messages: { event?: string; id?: string; data: unknown }[] = [];
      const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
      const reading = (async () => {
        const stream = response
          .body!.pipeThrough(new TextDecoderStream())
          .pipeThrough(new EventSourceParserStream());
        for await (const message of iterate(stream))
          messages.push({ event: message.event, id: message.id, data: JSON.parse(message.data) });
      })();
      const deferred = { event: "deferred", id: undefined, data: { status: "deferred", error: failure } };
      await expect.poll(() => messages.length).toBe(2);
      expect(messages).toEqual([{ event: "text", id: "0", data: event(0) }, deferred]);
      // Resumed (no end is recorded for that), then deferred again: said again.
      await redis.client().hset("tail8:job:{j8}", "status", "waiting");
      await endWithoutDone(prefix, "j8", "deferred", failure);
      await expect.poll(() => messages.length).toBe(3);
      expect(messages[2]).toEqual(deferred);
      // Resumed, and it ends.
      await log.append("j8", event(1, true));
      await endWithoutDone(prefix, "j8", "completed");
      await reading;
      expect(messages.slice(3)).toEqual([
        { event: "done", id: "1", data: event(1, true) },
        { event: "end", id: undefined, data: { status: "completed" } },
      ]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it("text/event-stream ends with an `end` event after the last stored event; a reconnect with Last-Event-ID gets nothing twice", async () => {
    const prefix = "tail7:";
    const log = createEventLog(redis.client(), { prefix });
    const { server, url } = await endpoint(createEventLog(redis.client(), { prefix }), "j7");
    try {
      for (let seq = 0; seq < 3; seq++) await log.append("j7", event(seq));
      const messages: { event: string; id: string | undefined; data: unknown }[] = [];
      const read = async (lastEventId?: string, stopAfter = Number.POSITIVE_INFINITY) => {
        const controller = new AbortController();
        const response = await fetch(url, {
          headers: lastEventId ? { "last-event-id": lastEventId } : {},
          signal: controller.signal,
        });
        const stream = response
          .body!.pipeThrough(new TextDecoderStream())
          .pipeThrough(new EventSourceParserStream());
        let count = 0;
        try {
          for await (const message of iterate(stream)) {
            messages.push({ event: message.event!, id: message.id, data: JSON.parse(message.data) });
            if (++count === stopAfter) break;
          }
        } finally {
          controller.abort();
        }
      };
      await read(undefined, 2);
      expect(messages.map((m) => m.id)).toEqual(["0", "1"]);
      const reading = read("1");
      await new Promise((resolve) => setTimeout(resolve, 50));
      await log.append("j7", event(3));
      await endWithoutDone(prefix, "j7", "indeterminate", lost);
      // The stream ends by itself: no abort from the reader.
      await reading;
      const end = { event: "end", id: undefined, data: { status: "indeterminate", error: lost } };
      expect(messages.map((m) => m.id)).toEqual(["0", "1", "2", "3", undefined]);
      expect(messages.at(-1)).toEqual(end);
      expect(messages.some((m) => m.event === "done")).toBe(false);
      // An EventSource that reconnects after the end anyway (Last-Event-ID 3) gets only the end.
      messages.length = 0;
      await read("3");
      expect(messages).toEqual([end]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
