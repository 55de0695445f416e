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
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
