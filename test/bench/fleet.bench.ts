/**
 * Fleet benchmarks (`npm run bench`), against a real redis-server on loopback: events per
 * second through the Redis job store (write) and the event log (write, tail), latency from
 * an event's append to its delivery to a tail on another connection (median, p99), and the
 * worker's overhead against running the same jobs directly.
 */
import { expect, test } from "vitest";
import type { ResearchEvent } from "../../src/index.js";
import { Sonde } from "../../src/index.js";
import { createEventLog, createRedisStore } from "../../src/redis/index.js";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { startRedis } from "../helpers/redis-server.js";

const EVENTS = 5_000;
const LATENCY_EVENTS = 1_000;
const JOBS = 40;
const WARM_UP = 5;

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const text = (seq: number): ResearchEvent => ({ type: "text", seq, delta: `token ${seq} ` }) as ResearchEvent;

test("fleet: store and tail throughput, tail latency, worker overhead", async () => {
  const redis = await startRedis();
  try {
    const figures: Record<string, string> = {};

    // 1. Portable store writes: fenced appends, one at a time as a runner makes them.
    const store = createRedisStore(redis.client(), { prefix: "bench:" });
    const jobId = "pj_benchstore00000001";
    await store.putJob({
      v: 1,
      jobId,
      model: "portable:demo/offline",
      request: { model: "portable:demo/offline", query: "q" },
      requestKey: "{}",
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      status: "running",
    });
    const lease = (await store.acquireLease!(jobId, "bench", 60_000))!;
    let started = performance.now();
    for (let index = 0; index < EVENTS; index++) {
      await store.appendEvent(
        jobId,
        { index, key: `k${index}`, data: { type: "phase", phase: "read" }, at: "" },
        lease,
      );
    }
    figures["store write (fenced appendEvent), events/s"] = (
      EVENTS /
      ((performance.now() - started) / 1000)
    ).toFixed(0);

    // 2. Event log: write, then tail everything from the start on another connection.
    const writer = createEventLog(redis.client(), { prefix: "bench:" });
    const reader = createEventLog(redis.client(), { prefix: "bench:" });
    started = performance.now();
    for (let seq = 0; seq < EVENTS; seq++)
      await writer.append(
        "rj_tp",
        seq === EVENTS - 1 ? ({ type: "done", seq, status: "completed" } as ResearchEvent) : text(seq),
      );
    figures["event log write, events/s"] = (EVENTS / ((performance.now() - started) / 1000)).toFixed(0);
    started = performance.now();
    let count = 0;
    for await (const _ of reader.tail("rj_tp")) count++;
    expect(count).toBe(EVENTS);
    figures["tail (catch-up read), events/s"] = (EVENTS / ((performance.now() - started) / 1000)).toFixed(0);

    // 3. Live tail latency: append → delivery on a separate connection, one event every 2 ms.
    const sentAt = new Map<number, number>();
    const latencies: number[] = [];
    const tail = (async () => {
      for await (const event of reader.tail("rj_lat")) {
        latencies.push(performance.now() - sentAt.get(event.seq)!);
      }
    })();
    for (let seq = 0; seq < LATENCY_EVENTS; seq++) {
      sentAt.set(seq, performance.now());
      await writer.append(
        "rj_lat",
        seq === LATENCY_EVENTS - 1
          ? ({ type: "done", seq, status: "completed" } as ResearchEvent)
          : text(seq),
      );
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await tail;
    latencies.sort((a, b) => a - b);
    figures["tail latency median, ms"] = quantile(latencies, 0.5).toFixed(2);
    figures["tail latency p99, ms"] = quantile(latencies, 0.99).toFixed(2);

    // 4. Worker overhead: the same demo jobs run one at a time directly, then through the queue.
    const queries = Array.from(
      { length: JOBS },
      (_, i) => `How do deep research agents verify citations? (${i})`,
    );
    const client = (prefix: string) =>
      new Sonde({ env: {}, portable: { store: createRedisStore(redis.client(), { prefix }) } });
    const direct = client("bench-direct:");
    for (let i = 0; i < WARM_UP; i++)
      await direct.research.start({ model: "portable:demo/offline", query: `warm-up ${i}` }).result();
    started = performance.now();
    for (const query of queries)
      await direct.research.start({ model: "portable:demo/offline", query }).result();
    const directMs = performance.now() - started;
    const queue = createResearchQueue({
      redis: redis.client(),
      client: client("bench-w:"),
      prefix: "bench-w:",
      queueName: "bench",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: client("bench-w:"),
      prefix: "bench-w:",
      queueName: "bench",
      concurrency: 1,
    });
    const warm = await queue.enqueue(
      { model: "portable:demo/offline", query: "warm-up" },
      { idempotencyKey: "warm" },
    );
    while (!(await queue.result(warm.id))) await new Promise((resolve) => setTimeout(resolve, 5));
    started = performance.now();
    for (const [i, query] of queries.entries()) {
      const { id } = await queue.enqueue(
        { model: "portable:demo/offline", query },
        { idempotencyKey: `q${i}` },
      );
      for await (const event of queue.events.tail(id)) if (event.type === "done") break;
      while (!(await queue.result(id))) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const workerMs = performance.now() - started;
    await worker.close();
    await queue.close();
    figures["jobs direct, ms per job"] = (directMs / JOBS).toFixed(1);
    figures["jobs via queue + worker, ms per job"] = (workerMs / JOBS).toFixed(1);
    figures["worker overhead, ms per job"] = ((workerMs - directMs) / JOBS).toFixed(1);
    figures["worker overhead, %"] = ((100 * (workerMs - directMs)) / directMs).toFixed(1);
    console.table(figures);
  } finally {
    await redis.stop();
  }
}, 300_000);
