/**
 * A queued request that stops validating before its run (its model retired meanwhile, a model
 * or option the catalog no longer has) can never run: it ends once, `failed`, with the typed
 * error in its state and events, nothing sent, its fleet slot given back, and `settled()`
 * answers. BullMQ does not run it again.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { canonicalJson } from "../../src/worker/queue.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

/** OpenAI retired o4-mini-deep-research on 2026-07-23 (catalog). */
const RETIRED = "openai:o4-mini-deep-research";
const before = () => new Date("2026-06-01T00:00:00Z");
const after = () => new Date("2026-08-01T00:00:00Z");

it("a request that no longer validates when its run begins ends failed once, with the typed error, sending nothing", async () => {
  const prefix = "rf1:";
  const db = redis.client();
  const api = await startLoopback((_request, response) => {
    response.writeHead(500, { "content-type": "application/json" });
    response.end("{}");
  });
  const openai = (clock: () => Date) =>
    new Sonde({
      env: {},
      openai: { apiKey: "sk-test-openai-0123456789abcdef", baseURL: `${api.url}/v1` },
      clock,
    });
  // Queued before OpenAI retired the model; run by workers whose clock is past it.
  const queue = createResearchQueue({ redis: db, client: openai(before), prefix, queueName: "rf1" });
  const enqueue = (model: string, query: string) =>
    queue.enqueue({ model, query }, { idempotencyKey: query });
  const retired = await enqueue(RETIRED, "Retired meanwhile");
  // A model a newer catalog no longer has, and an option its engine no longer takes.
  const unknown = await enqueue("openai:gpt-5.5-pro", "Dropped from the catalog");
  const unsupported = await enqueue("openai:gpt-5.5-pro", "Option no longer taken");
  const stored = async (id: string, request: Record<string, unknown>) =>
    db.hset(`${prefix}job:{${id}}`, "request", canonicalJson(request));
  await stored(unknown.id, { model: "openai:gpt-9", query: "Dropped from the catalog" });
  await stored(unsupported.id, {
    model: "openai:gpt-5.5-pro",
    query: "Option no longer taken",
    sources: { urls: ["https://example.org/"] },
  });
  // A job that was in flight (its ref stored, holding the fleet's one OpenAI slot) when its model retired.
  const inFlight = await enqueue(RETIRED, "In flight when retired");
  await db.hset(`${prefix}job:{${inFlight.id}}`, {
    status: "waiting",
    ref: JSON.stringify({
      v: 1,
      provider: "openai",
      model: RETIRED,
      jobId: "resp_in_flight",
      createdAt: "2026-07-22T23:00:00.000Z",
      resume: {},
    }),
  });
  await db.zadd(`${prefix}slots:openai`, "+inf", inFlight.id);

  const workers = [0, 1].map(() =>
    createResearchWorker({
      redis: redis.client(),
      client: openai(after),
      prefix,
      queueName: "rf1",
      engineLimits: { openai: 1 },
    }),
  );
  try {
    const expected = [
      [retired.id, "model_retired", /was retired on 2026-07-23\. Use "openai:gpt-5\.5-pro" instead/],
      [unknown.id, "unknown_model", /Unknown model "openai:gpt-9"/],
      [unsupported.id, "unsupported_option", /cannot honour "sources"/],
      [inFlight.id, "model_retired", /was retired on 2026-07-23/],
    ] as const;
    for (const [id, code, message] of expected) {
      // settled() answers (it waited forever while BullMQ ran the request again and again).
      const { state, result } = await queue.settled(id, { signal: AbortSignal.timeout(10_000) });
      expect(state).toMatchObject({ status: "failed", error: { code } });
      expect(state.error?.message).toMatch(message);
      expect(state.submittingAt).toBeUndefined();
      expect(result).toBeUndefined();
      // Tails end: the typed error, then `done`, once.
      const events = [];
      for await (const event of queue.events.tail(id, { signal: AbortSignal.timeout(5_000) }))
        events.push(event);
      expect(events.map((e) => [e.seq, e.type])).toEqual([
        [0, "error"],
        [1, "done"],
      ]);
      expect(events[0]).toMatchObject({ error: { code, retryable: false } });
      expect(events[1]).toMatchObject({ status: "failed" });
    }
    // Each queue entry ran once and completed: BullMQ does not run a refused request again.
    for (const [id] of expected) {
      await expect
        .poll(async () => (await queue.queue.getJob(id))?.finishedOn, { timeout: 5_000 })
        .toBeDefined();
      const entry = (await queue.queue.getJob(id))!;
      expect(entry.attemptsMade).toBe(1);
      expect(entry.failedReason).toBeFalsy();
    }
    // The in-flight job's slot was given back; nothing went to the provider.
    expect(await db.zcard(`${prefix}slots:openai`)).toBe(0);
    expect(api.requests).toEqual([]);
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await queue.close();
    await api.close();
  }
});

it("what a worker's own setup lacks (a base URL) is no refusal: the job waits unmarked for a worker that can run it", async () => {
  const prefix = "rf2:";
  const api = await startLoopback((request, response) => {
    const body =
      request.method === "POST"
        ? {
            job_id: "job_1",
            status: "queued",
            agent_id: "agents.deep_research",
            poll_url: "/v1/jobs/job_1",
            created_at: new Date().toISOString(),
          }
        : { job_id: "job_1", status: "completed", result: { content: "Ran.", citations: [], charge_usd: 1 } };
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
  const hosted = (baseURL?: string) =>
    new Sonde({ env: {}, hosted: { apiKey: "hosted-key-0123456789abcdef", ...(baseURL && { baseURL }) } });
  const queue = createResearchQueue({
    redis: redis.client(),
    client: hosted(api.url),
    prefix,
    queueName: "rf2",
  });
  const unset = createResearchWorker({ redis: redis.client(), client: hosted(), prefix, queueName: "rf2" });
  let set: ReturnType<typeof createResearchWorker> | undefined;
  try {
    const { id } = await queue.enqueue(
      { model: "hosted:agents.deep_research", query: "Set up later" },
      { idempotencyKey: "s" },
    );
    await expect.poll(async () => (await queue.queue.getJob(id))?.attemptsMade ?? 0).toBeGreaterThan(0);
    expect(await queue.status(id)).toMatchObject({ status: "queued" });
    expect((await queue.status(id))?.submittingAt).toBeUndefined();
    await unset.close();
    set = createResearchWorker({ redis: redis.client(), client: hosted(api.url), prefix, queueName: "rf2" });
    const { state, result } = await queue.settled(id, { signal: AbortSignal.timeout(10_000) });
    expect(state.status).toBe("completed");
    expect(result?.report).toBe("Ran.");
  } finally {
    await unset.close();
    await set?.close();
    await queue.close();
    await api.close();
  }
});

it("a stored ref that attach refuses ends the job failed once; its slot is kept while the job may still run", async () => {
  const prefix = "rf3:";
  const db = redis.client();
  const api = await startLoopback((_request, response) => {
    response.writeHead(500, { "content-type": "application/json" });
    response.end("{}");
  });
  const openai = () =>
    new Sonde({ env: {}, openai: { apiKey: "sk-test-openai-0123456789abcdef", baseURL: `${api.url}/v1` } });
  const queue = createResearchQueue({ redis: db, client: openai(), prefix, queueName: "rf3" });
  const { id } = await queue.enqueue(
    { model: "openai:gpt-5.5-pro", query: "A ref from elsewhere" },
    { idempotencyKey: "ref" },
  );
  // A ref no Sonde release reads (version 9), stored while its job was running.
  const createdAt = new Date().toISOString();
  await db.hset(`${prefix}job:{${id}}`, {
    status: "waiting",
    ref: JSON.stringify({
      v: 9,
      provider: "openai",
      model: "openai:gpt-5.5-pro",
      jobId: "resp_1",
      createdAt,
      resume: {},
    }),
  });
  const worker = createResearchWorker({
    redis: redis.client(),
    client: openai(),
    prefix,
    queueName: "rf3",
    engineLimits: { openai: 1 },
    indeterminateSlotMs: 60_000,
  });
  try {
    const { state } = await queue.settled(id, { signal: AbortSignal.timeout(10_000) });
    expect(state).toMatchObject({ status: "failed", error: { code: "invalid_ref" } });
    expect((await queue.events.read(id)).map((e) => e.type)).toEqual(["error", "done"]);
    // It may be running at OpenAI: its slot lapses when such a run would be over.
    expect(Number(await db.zscore(`${prefix}slots:openai`, id))).toBe(Date.parse(createdAt) + 60_000);
    expect(api.requests).toEqual([]);
  } finally {
    await worker.close();
    await queue.close();
    await api.close();
  }
});
