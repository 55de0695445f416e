import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyConflictError, JobNotFoundError, Sonde, UnknownModelError } from "../../src/index.js";
import { createRedisStore } from "../../src/redis/index.js";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { portableChat } from "../bench/fleet-fakes.js";
import { HOSTED, hostedClient, invoked, reply } from "../helpers/hosted-fake.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const DEMO = "portable:demo/offline";
const clientOn = (prefix: string) =>
  new Sonde({ env: {}, portable: { store: createRedisStore(redis.client(), { prefix }), leaseMs: 1_000 } });

const until = async (check: () => Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe("sonde/worker", () => {
  it("validates before queueing, deduplicates by key, and two workers finish each job once with its result and events", async () => {
    const prefix = "w1:";
    const queue = createResearchQueue({
      redis: redis.client(),
      client: clientOn(prefix),
      prefix,
      queueName: "w1",
    });
    const workers = [0, 1].map(() =>
      createResearchWorker({ redis: redis.client(), client: clientOn(prefix), prefix, queueName: "w1" }),
    );
    try {
      await expect(
        queue.enqueue({ model: "openai:gpt-9", query: "q" }, { idempotencyKey: "bad" }),
      ).rejects.toSatisfy((e: unknown) => UnknownModelError.isInstance(e));
      expect(await queue.queue.getJobCounts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
      const queries = [
        "How do deep research agents verify citations?",
        "What limits sodium-ion density?",
        "Why do heat pumps save energy?",
      ];
      const handles = await Promise.all(
        queries.map((query, i) => queue.enqueue({ model: DEMO, query }, { idempotencyKey: `job-${i}` })),
      );
      const again = await queue.enqueue({ model: DEMO, query: queries[0]! }, { idempotencyKey: "job-0" });
      expect(again).toEqual({ id: handles[0]!.id, created: false });
      await expect(
        queue.enqueue({ model: DEMO, query: "other" }, { idempotencyKey: "job-0" }),
      ).rejects.toSatisfy((e: unknown) => IdempotencyConflictError.isInstance(e));
      // `done` and the result are stored in one step: a watcher that saw `done` reads the result at once.
      for (const handle of handles) {
        for await (const event of queue.events.tail(handle.id)) if (event.type === "done") break;
        expect(await queue.result(handle.id)).toBeDefined();
      }
      await until(async () => (await Promise.all(handles.map((h) => queue.result(h.id)))).every(Boolean));
      // A worker that died after storing `done` but before the result: the next run stores
      // the result and no second `done`.
      const db = redis.client();
      const first = handles[0]!.id;
      await db.del(`${prefix}result:{${first}}`);
      await db.hset(`${prefix}job:{${first}}`, "status", "running");
      await queue.queue.add("wake", { id: first }, { jobId: `${first}-wake-9` });
      await until(async () => (await queue.result(first)) !== undefined);
      for (const [i, handle] of handles.entries()) {
        const result = (await queue.result(handle.id))!;
        // Byte-identical to the same job run directly, without a queue.
        const direct = await clientOn("w1-direct:")
          .research.start({ model: DEMO, query: queries[i]! })
          .result();
        expect(result.report).toBe(direct.report);
        expect(result.status).toBe(direct.status);
        const events = await queue.events.read(handle.id);
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
        expect(events.filter((e) => e.type === "done")).toHaveLength(1);
        expect((await queue.status(handle.id))?.ref?.jobId).toMatch(/^pj_/);
      }
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      await queue.close();
    }
  });
});

describe("sonde/worker: waiting for a job's end", () => {
  it("settled() wakes on the worker's final write with the state and result, without polling", async () => {
    const prefix = "w6:";
    const queue = createResearchQueue({
      redis: redis.client(),
      client: clientOn(prefix),
      prefix,
      queueName: "w6",
    });
    try {
      await expect(queue.settled("rj_never_queued")).rejects.toSatisfy((e: unknown) =>
        JobNotFoundError.isInstance(e),
      );
      const { id } = await queue.enqueue(
        { model: DEMO, query: "Why do heat pumps save energy?" },
        { idempotencyKey: "s1" },
      );
      const stopped = new AbortController();
      const abandoned = queue.settled(id, { signal: stopped.signal });
      stopped.abort(new Error("stopped waiting"));
      await expect(abandoned).rejects.toThrow("stopped waiting");
      // Waiting before any worker runs: one blocking read (5 s), which the final write must cut short.
      const waiting = queue.settled(id);
      const started = Date.now();
      const worker = createResearchWorker({
        redis: redis.client(),
        client: clientOn(prefix),
        prefix,
        queueName: "w6",
      });
      try {
        const { state, result } = await waiting;
        expect(Date.now() - started).toBeLessThan(4_000);
        const stored = (await queue.result(id))!;
        expect(state.status).toBe(stored.status);
        expect(result?.report).toBe(stored.report);
        // After the end it answers at once, from the stored state.
        expect((await queue.settled(id)).state.status).toBe(stored.status);
      } finally {
        await worker.close();
      }
    } finally {
      await queue.close();
    }
  });
});

/** A client of the fake hosted API whose portable store is this test's Redis. */
const hostedOn = (url: string, prefix: string) =>
  hostedClient(url, { portable: { store: createRedisStore(redis.client(), { prefix }) } });

describe("sonde/worker failure handling", () => {
  it("a submission that may have been sent without a stored ref is indeterminate and never sent again", async () => {
    const prefix = "w2:";
    const api = await startLoopback((_request, response) => reply(response, 500, {}));
    const queue = createResearchQueue({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w2",
    });
    try {
      const { id } = await queue.enqueue({ model: HOSTED, query: "What changed?" }, { idempotencyKey: "k" });
      // A worker marked the submission and died before the invoke answered.
      await redis
        .client()
        .hset(`${prefix}job:{${id}}`, { submittingAt: "2026-12-01T10:00:00.000Z", status: "running" });
      const worker = createResearchWorker({
        redis: redis.client(),
        client: hostedOn(api.url, prefix),
        prefix,
        queueName: "w2",
      });
      // settled() also wakes for an end that stores no result.
      const { state: settled, result } = await queue.settled(id);
      expect(settled.status).toBe("indeterminate");
      expect(result).toBeUndefined();
      await worker.close();
      const state = await queue.status(id);
      expect(state?.error?.message).toContain("not sent again: look for it in the provider account");
      expect(api.requests).toEqual([]);
    } finally {
      await queue.close();
      await api.close();
    }
  });

  it("stores the cancellation intent first; the worker holding the job cancels it and records the outcome", async () => {
    const prefix = "w3:";
    let state: "running" | "canceled" = "running";
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") return reply(response, 200, invoked("job_c"));
      if (request.method === "DELETE") {
        state = "canceled";
        return reply(response, 200, { job_id: "job_c", status: "canceled" });
      }
      return reply(response, 200, { job_id: "job_c", status: state });
    });
    const queue = createResearchQueue({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w3",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w3",
      cancelPollMs: 50,
      holdMs: 60_000,
    });
    try {
      const { id } = await queue.enqueue({ model: HOSTED, query: "Cancel me" }, { idempotencyKey: "c" });
      await until(async () => (await queue.status(id))?.ref !== undefined);
      await queue.cancel(id);
      expect((await queue.status(id))?.cancelRequestedAt).toBeDefined();
      await until(async () => (await queue.status(id))?.status === "cancelled");
      expect((await queue.status(id))?.cancelOutcome).toMatchObject({ outcome: "cancelled" });
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(1);
      expect(api.requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
    } finally {
      await worker.close();
      await queue.close();
      await api.close();
    }
  });

  it("polls a poll-only job by delayed wakes with a persisted backoff, and defers it after five retryable failures", async () => {
    const prefix = "w4:";
    let failing = false;
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") return reply(response, 200, invoked("job_w"));
      if (failing) return reply(response, 503, { error: { message: "unavailable" } });
      return reply(response, 200, { job_id: "job_w", status: "running" });
    });
    const queue = createResearchQueue({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w4",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w4",
      holdMs: 150,
      wakeBackoff: { minMs: 40, maxMs: 200 },
    });
    try {
      const { id } = await queue.enqueue({ model: HOSTED, query: "Long job" }, { idempotencyKey: "w" });
      // The job gives its worker slot back between polls: each later poll is a delayed wake.
      const stateKey = `${prefix}job:{${id}}`;
      await until(async () => Number(await redis.client().hget(stateKey, "wakes")) >= 2);
      expect((await queue.queue.getJob(`${id}-wake-1`))?.opts.delay).toBeGreaterThan(0);
      failing = true;
      const backoffs: number[] = [];
      await until(async () => {
        const state = await queue.status(id);
        if (state?.backoffMs !== undefined && state.failures > 0 && backoffs.at(-1) !== state.backoffMs)
          backoffs.push(state.backoffMs);
        return state?.status === "deferred";
      });
      const state = (await queue.status(id))!;
      expect(state.failures).toBe(5);
      // Doubling from the minimum, capped.
      expect(backoffs.every((b, i) => i === 0 || b >= backoffs[i - 1]!)).toBe(true);
      expect(Math.max(...backoffs)).toBe(200);
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(1);
      // The failed polls ended attaches, not the job: nothing terminal was stored.
      expect((await queue.events.read(id)).filter((e) => e.type === "done" || e.type === "error")).toEqual(
        [],
      );
    } finally {
      await worker.close();
      await queue.close();
      await api.close();
    }
  });
});

describe("sonde/worker: slots and holds around the submission", () => {
  it("a poll-only job whose create is slower than holdMs is held only after its ref is stored, never indeterminate", async () => {
    const prefix = "w5:";
    let answeredAt = 0;
    const api = await startLoopback(async (request, response) => {
      if (request.method === "POST") {
        // The invoke answers after the worker's hold would have fired.
        await new Promise((resolve) => setTimeout(resolve, 400));
        answeredAt = Date.now();
        return reply(response, 200, invoked("job_slow"));
      }
      if (Date.now() < answeredAt + 500)
        return reply(response, 200, { job_id: "job_slow", status: "running" });
      return reply(response, 200, {
        job_id: "job_slow",
        status: "completed",
        result: { content: "Done.", citations: [], charge_usd: 1 },
      });
    });
    const queue = createResearchQueue({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w5",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w5",
      holdMs: 100,
      wakeBackoff: { minMs: 30, maxMs: 60 },
    });
    try {
      const { id } = await queue.enqueue({ model: HOSTED, query: "Slow invoke" }, { idempotencyKey: "s" });
      await until(async () =>
        ["completed", "indeterminate", "failed"].includes((await queue.status(id))?.status ?? ""),
      );
      expect((await queue.status(id))?.status).toBe("completed");
      expect((await queue.result(id))?.report).toBe("Done.");
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(1);
      // It was held and woken between polls once its ref existed.
      expect(Number(await redis.client().hget(`${prefix}job:{${id}}`, "wakes"))).toBeGreaterThan(0);
    } finally {
      await worker.close();
      await queue.close();
      await api.close();
    }
  });

  it("an indeterminate hosted job keeps the fleet's one slot until its run could be over", async () => {
    const prefix = "w6:";
    const invokedAt: number[] = [];
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") {
        invokedAt.push(Date.now());
        return reply(response, 200, invoked("job_next"));
      }
      return reply(response, 200, {
        job_id: "job_next",
        status: "completed",
        result: { content: "Next.", citations: [], charge_usd: 1 },
      });
    });
    const queue = createResearchQueue({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w6",
    });
    try {
      const first = await queue.enqueue({ model: HOSTED, query: "Lost answer" }, { idempotencyKey: "a" });
      // A worker sent the invoke and died before storing the ref.
      const sentAt = Date.now();
      await redis.client().hset(`${prefix}job:{${first.id}}`, {
        submittingAt: new Date(sentAt).toISOString(),
        status: "running",
      });
      const worker = createResearchWorker({
        redis: redis.client(),
        client: hostedOn(api.url, prefix),
        prefix,
        queueName: "w6",
        indeterminateSlotMs: 1_500,
      });
      try {
        await until(async () => (await queue.status(first.id))?.status === "indeterminate");
        const second = await queue.enqueue({ model: HOSTED, query: "Next job" }, { idempotencyKey: "b" });
        await until(async () => (await queue.status(second.id))?.status === "completed");
        // The lost job may have been running at the provider: nothing else was invoked meanwhile.
        expect(invokedAt).toHaveLength(1);
        expect(invokedAt[0]!).toBeGreaterThanOrEqual(sentAt + 1_500);
      } finally {
        await worker.close();
      }
    } finally {
      await queue.close();
      await api.close();
    }
  });
});

describe("sonde/worker: the orderings that save round trips", () => {
  it("settled() returns the state and result the final step stored, and reads them itself after an end that carries none", async () => {
    const prefix = "w7:";
    const queue = createResearchQueue({
      redis: redis.client(),
      client: clientOn(prefix),
      prefix,
      queueName: "w7",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: clientOn(prefix),
      prefix,
      queueName: "w7",
    });
    try {
      const { id } = await queue.enqueue(
        { model: DEMO, query: "What limits sodium-ion density?" },
        { idempotencyKey: "a" },
      );
      const settled = await queue.settled(id);
      expect(settled.state).toEqual(await queue.status(id));
      expect(settled.result).toEqual(await queue.result(id));
      // An end written by an earlier worker (or a deferral) holds only the status.
      const db = redis.client();
      const other = await queue.enqueue(
        { model: DEMO, query: "Why do heat pumps save energy?" },
        { idempotencyKey: "b" },
      );
      await queue.settled(other.id);
      await db.hset(`${prefix}job:{${other.id}}`, "status", "running");
      const waiting = queue.settled(other.id);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await db
        .multi()
        .hset(`${prefix}job:{${other.id}}`, "status", "completed")
        .xadd(`${prefix}ended:{${other.id}}`, "MAXLEN", "1", "*", "status", "completed")
        .exec();
      const { state, result } = await waiting;
      expect(state.status).toBe("completed");
      expect(result).toEqual(await queue.result(other.id));
    } finally {
      await worker.close();
      await queue.close();
    }
  });

  it("the request is bound before BullMQ's add reaches Redis, even after Redis lost its scripts", async () => {
    const prefix = "w8:";
    const db = redis.client();
    const queue = createResearchQueue({
      redis: db,
      client: clientOn(prefix),
      prefix,
      queueName: "w8",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: clientOn(prefix),
      prefix,
      queueName: "w8",
    });
    try {
      await queue.settled(
        (
          await queue.enqueue(
            { model: DEMO, query: "How are quotations checked?" },
            { idempotencyKey: "warm" },
          )
        ).id,
      );
      // A restart or SCRIPT FLUSH: an EVALSHA bind would fail, be sent again after the add, and
      // the worker could find a queued job without a request ("missing"), never to run it.
      await db.script("FLUSH");
      // BullMQ's add script is loaded again (its EVALSHA goes through), the bind's is not.
      const scripts = (db as unknown as { scriptsSet: Record<string, { lua: string }> }).scriptsSet;
      const add = Object.entries(scripts).find(([name]) => name.startsWith("addStandardJob"))![1];
      await db.script("LOAD", add.lua);
      const monitor = await redis.client().monitor();
      const order: string[] = [];
      monitor.on("monitor", (_time: string, args: string[], source: string) => {
        if (source === "lua" && args[0]?.toLowerCase() === "hsetnx" && args[2] === "request")
          order.push("bind");
        else if (source === "lua" && args.some((arg) => /^bull:w8:rj_/.test(arg))) order.push("add");
      });
      const { id } = await queue.enqueue(
        { model: DEMO, query: "What makes a report verifiable?" },
        { idempotencyKey: "k" },
      );
      // A job left without its request would never settle (the test would time out).
      expect((await queue.settled(id)).state.status).toBe("completed");
      monitor.disconnect();
      expect(order[0]).toBe("bind");
      expect(order).toContain("add");
    } finally {
      await worker.close();
      await queue.close();
    }
  });

  it("a job of an engine with a fleet limit is marked as submitted only once it holds a slot", async () => {
    const prefix = "w9:";
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") return reply(response, 200, invoked("job_9"));
      return reply(response, 200, {
        job_id: "job_9",
        status: "completed",
        result: { content: "Nine.", citations: [], charge_usd: 1 },
      });
    });
    const db = redis.client();
    // Another job holds the fleet's one hosted slot.
    await db.zadd(`${prefix}slots:hosted`, "+inf", "rj_other");
    const queue = createResearchQueue({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w9",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w9",
    });
    try {
      const { id } = await queue.enqueue(
        { model: HOSTED, query: "Wait for a slot" },
        { idempotencyKey: "s" },
      );
      await until(async () => (await queue.queue.getJobCounts()).delayed === 1);
      // Marked now, a run after a restart would call it indeterminate although nothing was sent.
      expect(await queue.status(id)).toMatchObject({ status: "queued" });
      expect((await queue.status(id))?.submittingAt).toBeUndefined();
      await db.zrem(`${prefix}slots:hosted`, "rj_other");
      expect((await queue.settled(id)).state.status).toBe("completed");
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(1);
    } finally {
      await worker.close();
      await queue.close();
      await api.close();
    }
  });

  it("a run whose worker lacks a setting the request needs is not left marked as submitted, and is run again", async () => {
    const prefix = "w10:";
    const api = await startLoopback((_request, response) => reply(response, 500, {}));
    const openai = (apiKey?: string) =>
      new Sonde({ env: {}, openai: { ...(apiKey && { apiKey }), baseURL: `${api.url}/v1` } });
    const queue = createResearchQueue({
      redis: redis.client(),
      client: openai("sk-test-openai-0123456789abcdef"),
      prefix,
      queueName: "w10",
    });
    const { id } = await queue.enqueue(
      { model: "openai:gpt-5.5-pro", query: "Run by a worker without a key" },
      { idempotencyKey: "r" },
    );
    // No OpenAI key in this worker: another worker (or this one, once set up) can run the job.
    const worker = createResearchWorker({
      redis: redis.client(),
      client: openai(),
      prefix,
      queueName: "w10",
    });
    try {
      await until(async () => ((await queue.queue.getJob(id))?.attemptsMade ?? 0) > 0);
      expect(await queue.status(id)).toMatchObject({ status: "queued" });
      expect((await queue.status(id))?.submittingAt).toBeUndefined();
      expect(api.requests).toEqual([]);
    } finally {
      await worker.close();
      await queue.close();
      await api.close();
    }
  });
});

describe("sonde/worker: cancellation seen by the job's writes", () => {
  it("a job whose events flow learns of a stored cancellation from its next write, without polling", async () => {
    const prefix = "w11:";
    const chat = await portableChat();
    const client = () =>
      new Sonde({
        env: {},
        portable: {
          chat: { slow: { baseURL: `${chat.loopback.url}/v1` } },
          search: chat.search,
          fetcher: chat.fetcher,
          store: createRedisStore(redis.client(), { prefix }),
        },
      });
    const queue = createResearchQueue({ redis: redis.client(), client: client(), prefix, queueName: "w11" });
    // A poll a minute apart: only a write can tell this worker in time.
    const worker = createResearchWorker({
      redis: redis.client(),
      client: client(),
      prefix,
      queueName: "w11",
      cancelPollMs: 60_000,
    });
    try {
      const { id } = await queue.enqueue(
        { model: "portable:slow/model", query: "How do heat pumps compare with gas boilers?" },
        { idempotencyKey: "c" },
      );
      for await (const event of queue.events.tail(id)) if (event.type === "created") break;
      await queue.cancel(id);
      const { state } = await queue.settled(id);
      expect(state.status).toBe("cancelled");
      expect(state.cancelOutcome).toMatchObject({ outcome: "cancelled" });
    } finally {
      await worker.close();
      await queue.close();
      await chat.loopback.close();
    }
  });
});

describe("sonde/worker: BullMQ's entries expire with the job's state", () => {
  const DAY_S = 86_400;

  it("a finished entry is kept as long as the job's state, then dropped; a repeated enqueue meanwhile runs nothing again", async () => {
    const prefix = "w12:";
    const db = redis.client();
    const queue = createResearchQueue({ redis: db, client: clientOn(prefix), prefix, queueName: "w12" });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: clientOn(prefix),
      prefix,
      queueName: "w12",
    });
    const finished = (id: string) =>
      until(async () => (await queue.queue.getJob(id))?.finishedOn !== undefined);
    try {
      const request = { model: DEMO, query: "Why do heat pumps save energy?" };
      const { id } = await queue.enqueue(request, { idempotencyKey: "kept" });
      const { status } = (await queue.settled(id)).state;
      await finished(id);
      // Kept seven days from its end, as Sonde keeps the job's state: not forever.
      const entry = (await queue.queue.getJob(id))!;
      expect(entry.opts.removeOnComplete).toEqual({ age: 7 * DAY_S });
      expect(entry.opts.removeOnFail).toEqual({ age: 7 * DAY_S });
      const events = (await queue.events.read(id)).length;
      const result = await queue.result(id);

      // The same key and request: the same job, and nothing queued or run again.
      expect(await queue.enqueue(request, { idempotencyKey: "kept" })).toEqual({ id, created: false });
      expect(await queue.queue.getJobCounts()).toMatchObject({
        waiting: 0,
        active: 0,
        delayed: 0,
        completed: 1,
      });

      // Eight days on (its end moved back), the next entry to finish drops it.
      await db.zadd("bull:w12:completed", Date.now() - 8 * DAY_S * 1_000, id);
      const other = await queue.enqueue(
        { model: DEMO, query: "What limits sodium-ion density?" },
        { idempotencyKey: "next" },
      );
      await queue.settled(other.id);
      await finished(other.id);
      expect(await queue.queue.getJob(id)).toBeUndefined();
      expect(await db.exists(`bull:w12:${id}`)).toBe(0);

      // The job's state outlives the entry (it lives seven days from the job's end): the key
      // still names the same ended job, whose run is not repeated.
      expect(await queue.enqueue(request, { idempotencyKey: "kept" })).toEqual({ id, created: false });
      await finished(id);
      expect((await queue.status(id))?.status).toBe(status);
      expect(await queue.events.read(id)).toHaveLength(events);
      expect(await queue.result(id)).toEqual(result);
    } finally {
      await worker.close();
      await queue.close();
    }
  });

  it("a key whose job expired queues a new job, even while BullMQ still keeps the earlier job's entry and wakes", async () => {
    const prefix = "w13:";
    const db = redis.client();
    const answered = new Map<string, number>();
    const api = await startLoopback(async (request, response) => {
      if (request.method === "POST") {
        const jobId = `job_${answered.size + 1}`;
        answered.set(jobId, Date.now());
        return reply(response, 200, invoked(jobId));
      }
      const jobId = request.url.split("/").at(-1)!;
      if (Date.now() < answered.get(jobId)! + 400)
        return reply(response, 200, { job_id: jobId, status: "running" });
      return reply(response, 200, {
        job_id: jobId,
        status: "completed",
        result: { content: `Done by ${jobId}.`, citations: [], charge_usd: 1 },
      });
    });
    const queue = createResearchQueue({
      redis: db,
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w13",
    });
    const worker = createResearchWorker({
      redis: redis.client(),
      client: hostedOn(api.url, prefix),
      prefix,
      queueName: "w13",
      holdMs: 100,
      wakeBackoff: { minMs: 30, maxMs: 60 },
    });
    const settled = (id: string) => queue.settled(id, { signal: AbortSignal.timeout(10_000) });
    try {
      const request = { model: HOSTED, query: "Reused key" };
      const first = await queue.enqueue(request, { idempotencyKey: "reused" });
      expect((await settled(first.id)).state.status).toBe("completed");
      expect(await queue.queue.getJob(`${first.id}-wake-1`)).toBeDefined();
      // Sonde's state of the job expires (a worker's resultTtlMs shorter than BullMQ's
      // seven days, or BullMQ dropping nothing while the queue is idle)…
      await db.del(
        `${prefix}job:{${first.id}}`,
        `${prefix}events:{${first.id}}`,
        `${prefix}result:{${first.id}}`,
        `${prefix}ended:{${first.id}}`,
      );
      expect(await queue.queue.getJob(first.id)).toBeDefined();
      // …and the key is used again: a new job, which runs (its entry and its wakes are its own).
      const again = await queue.enqueue(request, { idempotencyKey: "reused" });
      expect(again).toEqual({ id: first.id, created: true });
      const { state, result } = await settled(again.id);
      expect(state.status).toBe("completed");
      expect(result?.report).toBe("Done by job_2.");
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(2);
    } finally {
      await worker.close();
      await queue.close();
      await api.close();
    }
  });
});
