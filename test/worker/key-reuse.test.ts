/**
 * An idempotency key used again once its job's state expired queues a new job (README) under
 * the same id. Its event log and end entries have lifetimes of their own and outlived the
 * state: the new job's tail replayed the old provider job, and its run, finding `done` stored,
 * dropped every new event. A new job under a key now starts with an empty log. A portable
 * job's start was refused outright: its store still bound the id to the earlier request.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { createRedisStore } from "../../src/redis/index.js";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { completed, HOSTED, hostedClient, invoked, reply } from "../helpers/hosted-fake.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

it("a key used again after its state expired gets a job with its own events", async () => {
  let submitted = 0;
  const api = await startLoopback((request, response) => {
    if (request.method === "POST") return reply(response, 200, invoked(`job_${++submitted}`));
    const jobId = request.url.split("/").at(-1)!.split("?")[0]!;
    return reply(response, 200, completed(jobId));
  });
  const setup = { prefix: "kr:", queueName: "kr" };
  const queue = createResearchQueue({ redis: redis.client(), client: hostedClient(api.url), ...setup });
  const worker = createResearchWorker({
    redis: redis.client(),
    client: hostedClient(api.url),
    ...setup,
    resultTtlMs: 1_000,
  });
  try {
    const first = await queue.enqueue({ model: HOSTED, query: "first" }, { idempotencyKey: "k" });
    await queue.settled(first.id, { signal: AbortSignal.timeout(15_000) });
    await expect.poll(() => queue.status(first.id), { timeout: 5_000, interval: 100 }).toBeUndefined();
    const second = await queue.enqueue({ model: HOSTED, query: "second" }, { idempotencyKey: "k" });
    expect(second).toEqual({ id: first.id, created: true });
    const settled = await queue.settled(second.id, { signal: AbortSignal.timeout(15_000) });
    expect(settled.result?.report).toBe("Report of job_2.");
    const events = [];
    for await (const event of queue.events.tail(second.id, { signal: AbortSignal.timeout(5_000) }))
      events.push(event);
    expect(events.filter((event) => event.type === "created")).toEqual([
      expect.objectContaining({ jobId: "job_2" }),
    ]);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i));
    expect(events.filter((event) => event.type === "done")).toHaveLength(1);
  } finally {
    await worker.close();
    await queue.close();
    await api.close();
  }
}, 40_000);

it("portable: a key used again after its state expired starts a new job, not an idempotency conflict", async () => {
  const prefix = "krp:";
  const client = () =>
    new Sonde({ env: {}, portable: { store: createRedisStore(redis.client(), { prefix }), leaseMs: 1_000 } });
  const setup = { prefix, queueName: "krp" };
  const queue = createResearchQueue({ redis: redis.client(), client: client(), ...setup });
  const worker = createResearchWorker({
    redis: redis.client(),
    client: client(),
    ...setup,
    resultTtlMs: 1_000,
  });
  const model = "portable:demo/offline";
  try {
    const first = await queue.enqueue(
      { model, query: "Why do heat pumps save energy?" },
      { idempotencyKey: "k" },
    );
    const one = await queue.settled(first.id, { signal: AbortSignal.timeout(15_000) });
    await expect.poll(() => queue.status(first.id), { timeout: 5_000, interval: 100 }).toBeUndefined();
    const second = await queue.enqueue(
      { model, query: "What limits sodium-ion density?" },
      { idempotencyKey: "k" },
    );
    expect(second).toEqual({ id: first.id, created: true });
    const two = await queue.settled(second.id, { signal: AbortSignal.timeout(15_000) });
    // The demo engine's offline corpus ends its jobs `incomplete`: the second as the first.
    expect(two.state.error).toBeUndefined();
    expect(two.state.status).toBe(one.state.status);
    expect(two.result?.report).not.toBe(one.result?.report);
    const events = await queue.events.read(second.id);
    const text = events.flatMap((event) => (event.type === "text" ? [event.delta] : [])).join("");
    expect(text).toBe(two.result?.report);
  } finally {
    await worker.close();
    await queue.close();
  }
}, 40_000);

it("portable: a submission marked by an earlier version (bare id as its key) restarts as the same job", async () => {
  // A worker of the version before died between marking a portable submission and `created`.
  // Its key was the bare research id: a restart must find that job again, not start another.
  const prefix = "krl:";
  const store = () => createRedisStore(redis.client(), { prefix });
  const client = () => new Sonde({ env: {}, portable: { store: store(), leaseMs: 1_000 } });
  const setup = { prefix, queueName: "krl" };
  const queue = createResearchQueue({ redis: redis.client(), client: client(), ...setup });
  const request = { model: "portable:demo/offline", query: "Why do heat pumps save energy?" };
  try {
    const { id } = await queue.enqueue(request, { idempotencyKey: "k" });
    const earlier = client().research.start({ ...request, idempotencyKey: id });
    const started = await earlier.created();
    await earlier.detach();
    await redis
      .client()
      .hset(`${prefix}job:{${id}}`, { submittingAt: new Date().toISOString(), status: "running" });
    const worker = createResearchWorker({ redis: redis.client(), client: client(), ...setup });
    try {
      const settled = await queue.settled(id, { signal: AbortSignal.timeout(15_000) });
      expect(settled.state.error).toBeUndefined();
      expect(settled.state.ref?.jobId).toBe(started);
    } finally {
      await worker.close();
    }
  } finally {
    await queue.close();
  }
}, 40_000);
