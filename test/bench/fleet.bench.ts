/**
 * Fleet benchmarks (`npm run bench`), against a real redis-server on loopback: events per
 * second through the Redis job store (write) and the event log (write, tail), latency from
 * an event's append to its delivery to a tail on another connection (median, p99), and the
 * worker's overhead against running the same jobs directly (alternating, medians), with the
 * Redis commands each job costs.
 */
import { expect, test } from "vitest";
import type { ResearchEvent } from "../../src/index.js";
import { Sonde } from "../../src/index.js";
import { createEventLog, createRedisStore } from "../../src/redis/index.js";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

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

    await workerOverhead(redis, figures);
    console.table(figures);
  } finally {
    await redis.stop();
  }
}, 300_000);

/**
 * Worker overhead: the same demo jobs, one at a time, alternating a direct run and a run
 * through the queue (enqueue → worker → result read back), so load on a shared machine
 * hits both alike; medians per job, and the Redis commands each costs.
 */
async function workerOverhead(redis: RedisServer, figures: Record<string, string>) {
  const client = (prefix: string) =>
    new Sonde({ env: {}, portable: { store: createRedisStore(redis.client(), { prefix }) } });
  const direct = client("bench-direct:");
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
  const admin = redis.client();
  const commands = async () =>
    [...(await admin.info("commandstats")).matchAll(/calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
  const runDirect = (query: string) =>
    direct.research.start({ model: "portable:demo/offline", query }).result();
  const runQueued = async (query: string, key: string) => {
    const { id } = await queue.enqueue({ model: "portable:demo/offline", query }, { idempotencyKey: key });
    const { result } = await queue.settled(id);
    if (!result) throw new Error(`job ${id} ended without a result`);
  };
  for (let i = 0; i < WARM_UP; i++) {
    await runDirect(`warm-up ${i}`);
    await runQueued(`warm-up ${i}`, `warm-${i}`);
  }
  const directMs: number[] = [];
  const queuedMs: number[] = [];
  let directCommands = 0;
  let queuedCommands = 0;
  for (let i = 0; i < JOBS; i++) {
    const query = `How do deep research agents verify citations? (${i})`;
    let before = await commands();
    let started = performance.now();
    await runDirect(query);
    directMs.push(performance.now() - started);
    directCommands += (await commands()) - before - 1;
    before = await commands();
    started = performance.now();
    await runQueued(query, `q${i}`);
    queuedMs.push(performance.now() - started);
    queuedCommands += (await commands()) - before - 1;
  }
  await worker.close();
  await queue.close();
  const median = (list: number[]) =>
    quantile(
      [...list].sort((a, b) => a - b),
      0.5,
    );
  const [d, q] = [median(directMs), median(queuedMs)];
  figures["jobs direct, median ms per job"] = d.toFixed(1);
  figures["jobs via queue + worker, median ms per job"] = q.toFixed(1);
  figures["worker overhead, ms per job"] = (q - d).toFixed(1);
  figures["worker overhead, %"] = ((100 * (q - d)) / d).toFixed(1);
  figures["job length for < 5% overhead, ms"] = ((q - d) / 0.05).toFixed(0);
  figures["Redis commands per job, direct"] = (directCommands / JOBS).toFixed(0);
  figures["Redis commands per job, via queue + worker (incl. BullMQ, tail, result polls)"] = (
    queuedCommands / JOBS
  ).toFixed(0);
}
