/**
 * Watching queued jobs that end without a `done` event: an `indeterminate` job (its
 * submission may have reached the provider, so it may still be running there: no `done` is
 * made up for it; its one event is the `error` that says so) and a job cancelled before it
 * started (no event at all). A tail from another connection and
 * the SSE helper end once the job's stored state is final, after every stored event, and say
 * how the job ended; a browser that reconnects gets nothing twice.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/index.js";
import { createEventLog, type EventLog, eventStreamResponse } from "../../src/redis/index.js";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { HOSTED, hostedClient } from "../helpers/hosted-fake.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

/** Iterates a tail to its end: the events it yielded and its return value. */
async function drain(tail: AsyncGenerator<ResearchEvent, unknown>) {
  const events: ResearchEvent[] = [];
  for (let next = await tail.next(); ; next = await tail.next()) {
    if (next.done) return { events, end: next.value };
    events.push(next.value);
  }
}

/** A web instance serving `/<job id>` with the SSE helper, as an app mounts it. */
async function sseEndpoint(log: EventLog) {
  const server = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const response = eventStreamResponse(log, req.url!.slice(1), {
      headers: { get: (name) => (req.headers[name.toLowerCase()] as string | undefined) ?? null },
      signal: controller.signal,
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    Readable.fromWeb(response.body as never).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /** Every message of one connection, until the server ends the stream (never aborted here). */
  const read = async (jobId: string, lastEventId?: string) => {
    const response = await fetch(`${url}/${jobId}`, {
      headers: lastEventId ? { "last-event-id": lastEventId } : {},
      signal: AbortSignal.timeout(10_000),
    });
    const messages: { event?: string; id?: string; data: unknown }[] = [];
    const stream = response
      .body!.pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream());
    for await (const message of stream as unknown as AsyncIterable<{
      event?: string;
      id?: string;
      data: string;
    }>)
      messages.push({ event: message.event, id: message.id, data: JSON.parse(message.data) });
    return messages;
  };
  return {
    read,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe("watching a queued job that ends without `done`", () => {
  it("an indeterminate job and a job cancelled before it started: tails from another connection and the SSE helper end with the state", async () => {
    const prefix = "tl1:";
    // Every invoke gets a gateway's 502: it may have reached the service behind it.
    const api = await startLoopback((_request, response) => {
      response.writeHead(502, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "bad gateway" } }));
    });
    const queue = createResearchQueue({
      redis: redis.client(),
      client: hostedClient(api.url),
      prefix,
      queueName: "tl1",
    });
    const watcher = createEventLog(redis.client(), { prefix });
    const sse = await sseEndpoint(createEventLog(redis.client(), { prefix }));
    let worker: ReturnType<typeof createResearchWorker> | undefined;
    try {
      const cancelled = await queue.enqueue(
        { model: HOSTED, query: "Cancelled first" },
        { idempotencyKey: "c" },
      );
      await queue.cancel(cancelled.id);
      const lost = await queue.enqueue({ model: HOSTED, query: "Gateway" }, { idempotencyKey: "g" });
      // Watching before any worker runs them: every watcher blocks until the end.
      const signal = AbortSignal.timeout(10_000);
      const tails = [cancelled.id, lost.id].map((id) => drain(watcher.tail(id, { signal })));
      const streams = [cancelled.id, lost.id].map((id) => sse.read(id));
      await new Promise((resolve) => setTimeout(resolve, 100));
      worker = createResearchWorker({
        redis: redis.client(),
        client: hostedClient(api.url),
        prefix,
        queueName: "tl1",
        indeterminateSlotMs: 200,
      });
      const [cancelledTail, lostTail] = await Promise.all(tails);
      const [cancelledStream, lostStream] = await Promise.all(streams);

      expect((await queue.status(cancelled.id))?.status).toBe("cancelled");
      expect(cancelledTail).toEqual({ events: [], end: { status: "cancelled" } });
      expect(cancelledStream).toEqual([{ event: "end", id: undefined, data: { status: "cancelled" } }]);

      const state = (await queue.status(lost.id))!;
      expect(state.status).toBe("indeterminate");
      const lostEnd = { status: "indeterminate", error: state.error };
      expect(lostEnd.error?.code).toBe("indeterminate_submission");
      // The job's one event says what went wrong; its provider job may still be running, so
      // no `done` is made up for it.
      const stored = await queue.events.read(lost.id);
      expect(stored.map((e) => e.type)).toEqual(["error"]);
      expect(lostTail).toEqual({ events: stored, end: lostEnd });
      expect(lostStream).toEqual([
        { event: "error", id: "0", data: stored[0] },
        { event: "end", id: undefined, data: lostEnd },
      ]);

      // Tails started after the end end at once; a browser that reconnects (EventSource does
      // after any close) with its Last-Event-ID gets the end again, and no event twice.
      expect(await drain(watcher.tail(lost.id, { after: 0, signal }))).toEqual({ events: [], end: lostEnd });
      expect(await sse.read(lost.id, "0")).toEqual([{ event: "end", id: undefined, data: lostEnd }]);
      expect(await sse.read(cancelled.id)).toEqual(cancelledStream);
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(1);
    } finally {
      await worker?.close();
      sse.close();
      watcher.close();
      await queue.close();
      await api.close();
    }
  });
});
