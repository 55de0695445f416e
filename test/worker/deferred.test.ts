import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobNotFoundError, type ResearchEvent } from "../../src/index.js";
import { createEventLog } from "../../src/redis/index.js";
import {
  createResearchQueue,
  createResearchWorker,
  JobNotDeferredError,
  type WorkerSetup,
} from "../../src/worker/index.js";
import { giveUp, type RunContext } from "../../src/worker/run.js";
import { readState } from "../../src/worker/state.js";
import { completed, HOSTED, hostedClient, invoked, reply } from "../helpers/hosted-fake.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function fleet(prefix: string, baseURL: string, options: Partial<WorkerSetup> = {}, attempts?: number) {
  const queueName = prefix.slice(0, -1);
  const queue = createResearchQueue({
    redis: redis.client(),
    client: hostedClient(baseURL),
    prefix,
    queueName,
    ...(attempts !== undefined && { attempts }),
  });
  const workers: ReturnType<typeof createResearchWorker>[] = [];
  const startWorker = (workerClient = hostedClient(baseURL)) => {
    const worker = createResearchWorker({
      redis: redis.client(),
      client: workerClient,
      prefix,
      queueName,
      // Long enough that a failing poll's run ends on its failure, not on a hold (which
      // clears the failure count), however loaded the machine.
      holdMs: 2_000,
      wakeBackoff: { minMs: 30, maxMs: 60 },
      indeterminateSlotMs: 60_000,
      ...options,
    });
    workers.push(worker);
    return worker;
  };
  return {
    queue,
    startWorker,
    settled: (id: string) => queue.settled(id, { signal: AbortSignal.timeout(10_000) }),
    enqueue: (query: string) => queue.enqueue({ model: HOSTED, query }, { idempotencyKey: query }),
    slot: async (id: string) => {
      const score = await redis.client().zscore(`${prefix}slots:hosted`, id);
      return score === null ? null : Number(score);
    },
    async close() {
      await Promise.all(workers.map((w) => w.close()));
      await queue.close();
    },
  };
}

describe("a deferred job", () => {
  it("that may still run at the provider keeps the fleet's one hosted slot; queue.resume(id) brings it back once, without sending it again", async () => {
    let failing = false;
    let finished = false;
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") {
        const posts = api.requests.filter((r) => r.method === "POST").length;
        return reply(response, 200, invoked(`job_${posts}`));
      }
      const jobId = request.url.split("/").at(-1)!;
      if (failing) return reply(response, 503, { error: { message: "unavailable" } });
      if (jobId === "job_1" && !finished) return reply(response, 200, { job_id: jobId, status: "running" });
      return reply(response, 200, completed(jobId));
    });
    const f = fleet("df1:", api.url);
    f.startWorker();
    const posts = () => api.requests.filter((r) => r.method === "POST").length;
    try {
      const first = await f.enqueue("Polls fail");
      await expect.poll(async () => (await f.queue.status(first.id))?.ref, { timeout: 5_000 }).toBeDefined();
      failing = true;
      const { state } = await f.settled(first.id);
      expect(state).toMatchObject({
        status: "deferred",
        failures: 5,
        error: { code: "provider_unavailable" },
      });
      // Its hosted job may still be running: the slot lapses only when such a run would be over.
      expect(await f.slot(first.id)).toBe(Date.parse(state.ref!.createdAt) + 60_000);
      const second = await f.enqueue("Waits for the slot");
      await pause(800);
      expect(posts()).toBe(1);
      expect((await f.queue.status(second.id))?.status).toBe("queued");

      // Only a deferred job can be resumed.
      await expect(f.queue.resume("rj_never_queued")).rejects.toSatisfy((e: unknown) =>
        JobNotFoundError.isInstance(e),
      );
      const refused = await f.queue.resume(second.id).catch((e: unknown) => e);
      expect(JobNotDeferredError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ code: "invalid_request", jobStatus: "queued" });

      failing = false;
      finished = true;
      expect(await f.queue.resume(first.id)).toEqual({ resumed: true });
      // Idempotent: a second resume changes nothing and queues no second run.
      expect(await f.queue.resume(first.id)).toEqual({ resumed: false });
      const resumed = (await f.queue.status(first.id))!;
      expect(resumed.failures).toBe(0);
      expect(resumed.error).toBeUndefined();
      const done = await f.settled(first.id);
      expect(done.state.status).toBe("completed");
      expect(done.result?.report).toBe("Report of job_1.");
      // Its slot went back at its end: the second job runs now.
      expect((await f.settled(second.id)).state.status).toBe("completed");
      expect(posts()).toBe(2);
      const ended = await f.queue.resume(first.id).catch((e: unknown) => e);
      expect(ended).toMatchObject({ jobStatus: "completed" });
      expect(JobNotDeferredError.isInstance(ended)).toBe(true);
      // One run of the resume's wake: the job's events hold one `done`.
      const events = await f.queue.events.read(first.id);
      expect(events.filter((e) => e.type === "done")).toHaveLength(1);
      expect(events.filter((e) => e.type === "created")).toHaveLength(1);
    } finally {
      await f.close();
      await api.close();
    }
  });

  it("that never reached the provider gives its slot back; resumed, it is submitted again", async () => {
    let refusing = true;
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") {
        if (refusing) return reply(response, 503, { error: { message: "busy, try later" } });
        return reply(response, 200, invoked("job_1"));
      }
      return reply(response, 200, completed("job_1"));
    });
    const f = fleet("df2:", api.url);
    f.startWorker();
    try {
      const { id } = await f.enqueue("Refused five times");
      const { state } = await f.settled(id);
      expect(state).toMatchObject({
        status: "deferred",
        failures: 5,
        error: { code: "provider_unavailable" },
      });
      expect(state.submittingAt).toBeUndefined();
      expect(await f.slot(id)).toBeNull();
      refusing = false;
      const refused = api.requests.length;
      expect(await f.queue.resume(id)).toEqual({ resumed: true });
      const { state: after, result } = await f.settled(id);
      expect(after.status).toBe("completed");
      expect(result?.report).toBe("Report of job_1.");
      // Sent once more, and taken.
      expect(api.requests.slice(refused).filter((r) => r.method === "POST")).toHaveLength(1);
    } finally {
      await f.close();
      await api.close();
    }
  });
});

describe("BullMQ giving up on a job's runs", () => {
  it("ends a job never sent failed, once, and defers one with a provider job (its slot kept) until it is resumed", async () => {
    const prefix = "df3:";
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") return reply(response, 200, invoked("job_new"));
      return reply(response, 200, completed(request.url.split("/").at(-1)!));
    });
    // Two runs per queue entry; the first worker lacks the hosted base URL, so every run of
    // every job fails on what the worker's own setup lacks (no refusal: another worker could).
    const f = fleet(prefix, api.url, { attempts: 2, engineLimits: { hosted: 2 } }, 2);
    const db = redis.client();
    try {
      const never = await f.enqueue("Never sent");
      const running = await f.enqueue("Running at the provider");
      // The second had been submitted by another worker, which stored its ref and died.
      const createdAt = new Date().toISOString();
      const ref = { v: 1, provider: "hosted", model: HOSTED, jobId: "job_y", createdAt, resume: {} };
      await db.hset(`${prefix}job:{${running.id}}`, { status: "waiting", ref: JSON.stringify(ref) });
      await db.zadd(`${prefix}slots:hosted`, "+inf", running.id);
      const watched: ResearchEvent[] = [];
      const tail = (async () => {
        for await (const event of f.queue.events.tail(running.id, { signal: AbortSignal.timeout(15_000) }))
          watched.push(event);
      })();
      const unset = f.startWorker(hostedClient());

      // settled() sees both ends (it waited forever while BullMQ's entry sat failed).
      const lost = await f.settled(never.id);
      expect(lost.state).toMatchObject({ status: "failed", error: { code: "invalid_request" } });
      expect(lost.state.error?.message).toMatch(/BullMQ gave up on job .* after 2 runs.*No base URL/);
      expect(lost.result).toBeUndefined();
      expect((await f.queue.events.read(never.id)).map((e) => [e.seq, e.type])).toEqual([
        [0, "error"],
        [1, "done"],
      ]);
      expect(await f.slot(never.id)).toBeNull();
      const entry = (await f.queue.queue.getJob(never.id))!;
      expect(entry.attemptsMade).toBe(2);
      expect(entry.failedReason).toMatch(/No base URL/);

      const deferred = await f.settled(running.id);
      expect(deferred.state).toMatchObject({ status: "deferred", error: { code: "invalid_request" } });
      expect(deferred.state.error?.message).toMatch(/BullMQ gave up/);
      expect(await f.slot(running.id)).toBe(Date.parse(createdAt) + 60_000);
      // Not over: its tail stays open (nothing of it was written).
      await pause(200);
      expect(watched).toEqual([]);

      // A worker that can run it: the resume attaches from the stored ref, nothing is sent again.
      await unset.close();
      f.startWorker();
      expect(await f.queue.resume(running.id)).toEqual({ resumed: true });
      const { state, result } = await f.settled(running.id);
      expect(state.status).toBe("completed");
      expect(result?.report).toBe("Report of job_y.");
      await tail;
      expect(watched.at(-1)).toMatchObject({ type: "done", status: "completed" });
      expect(await f.slot(running.id)).toBeNull();
      // The job never sent stays failed: nothing of it reached the provider, then or later.
      expect((await f.queue.status(never.id))?.status).toBe("failed");
      expect(api.requests.filter((r) => r.method === "POST")).toEqual([]);
    } finally {
      await f.close();
      await api.close();
    }
  });
});

describe("what a job becomes when BullMQ gives up on it (giveUp)", () => {
  it("deferred with a provider job, indeterminate if sent without a ref, cancelled or failed if never sent; an ended job is left alone", async () => {
    const prefix = "df4:";
    const db = redis.client();
    const context = {
      redis: db,
      client: hostedClient("http://127.0.0.1:9"),
      prefix,
      events: createEventLog(db, { prefix }),
      limits: { hosted: 1 },
      indeterminateSlotMs: 60_000,
      resultTtlMs: 60_000,
    } as unknown as RunContext;
    const sentAt = new Date().toISOString();
    const ref = JSON.stringify({
      v: 1,
      provider: "hosted",
      model: HOSTED,
      jobId: "job_1",
      createdAt: sentAt,
      resume: {},
    });
    const jobs: Record<string, Record<string, string>> = {
      withRef: { status: "waiting", model: HOSTED, ref },
      sentNoRef: { status: "running", model: HOSTED, submittingAt: sentAt },
      portableStart: { status: "running", model: "portable:demo/offline", submittingAt: sentAt },
      cancelled: { status: "queued", model: HOSTED, cancelRequestedAt: sentAt },
      neverSent: { status: "queued", model: HOSTED },
      ended: { status: "completed", model: HOSTED, ref },
    };
    for (const [id, hash] of Object.entries(jobs)) {
      await db.hset(`${prefix}job:{${id}}`, { request: "{}", ...hash });
      await db.zadd(`${prefix}slots:hosted`, "+inf", id);
    }
    const outcome: Record<string, unknown> = {};
    for (const id of Object.keys(jobs)) {
      outcome[id] = await giveUp(
        context,
        id,
        new Error("READONLY You can't write against a read only replica."),
        3,
      );
    }
    expect(outcome).toEqual({
      withRef: "deferred",
      sentNoRef: "indeterminate",
      portableStart: "deferred",
      cancelled: "cancelled",
      neverSent: "failed",
      ended: "completed",
    });
    const state = async (id: string) => (await readState(db, prefix, id))!;
    const slot = async (id: string) => db.zscore(`${prefix}slots:hosted`, id);
    const lapse = String(Date.parse(sentAt) + 60_000);
    // May be running at the provider: the slot is kept until such a run would be over.
    for (const id of ["withRef", "sentNoRef"]) expect(await slot(id)).toBe(lapse);
    expect((await state("withRef")).error).toEqual({
      code: "worker_failed",
      message: expect.stringMatching(/BullMQ gave up on job withRef after 3 runs.*READONLY/),
    });
    expect((await state("sentNoRef")).error).toMatchObject({ code: "indeterminate_submission" });
    expect((await state("sentNoRef")).error?.message).toMatch(/look for it in the provider account/);
    // Never sent: over, its slot given back; only the failed job gets events (`error`, `done`).
    for (const id of ["cancelled", "neverSent"]) expect(await slot(id)).toBeNull();
    expect(await context.events.read("cancelled")).toEqual([]);
    expect(await context.events.read("sentNoRef")).toEqual([]);
    expect((await context.events.read("neverSent")).map((e) => e.type)).toEqual(["error", "done"]);
    expect(await slot("ended")).toBe("inf");
    // Each end wakes whoever waits for it.
    for (const id of ["withRef", "sentNoRef", "cancelled", "neverSent"])
      expect(await db.xlen(`${prefix}ended:{${id}}`)).toBe(1);
    context.events.close();
  });
});
