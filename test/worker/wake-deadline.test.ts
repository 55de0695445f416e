/**
 * A poll-only job is held (its slot given back) and attached again on every wake. Each attach
 * set a new deadline, so a job whose provider never finished was polled forever, holding its
 * engine's fleet slot (one hosted job at a time by default: every other one waited behind it).
 * A wake now attaches with what is left of the timeout counted from the submission, and a run
 * that begins past it gets one last read (a job may have finished meanwhile), without a hold.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { completed, HOSTED, hostedClient, invoked, reply } from "../helpers/hosted-fake.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

it("a poll-only job that never finishes ends by its deadline although it is held and woken", async () => {
  const api = await startLoopback((request, response) => {
    if (request.method === "POST") return reply(response, 200, invoked("job_r"));
    return reply(response, 200, { job_id: "job_r", status: "running" });
  });
  const setup = { prefix: "wd:", queueName: "wd" };
  const queue = createResearchQueue({ redis: redis.client(), client: hostedClient(api.url), ...setup });
  const worker = createResearchWorker({
    redis: redis.client(),
    client: hostedClient(api.url),
    ...setup,
    holdMs: 300,
    wakeBackoff: { minMs: 50, maxMs: 100 },
  });
  try {
    const { id } = await queue.enqueue(
      { model: HOSTED, query: "q", timeoutMs: 2_000 },
      { idempotencyKey: "k" },
    );
    await expect.poll(async () => (await queue.status(id))?.ref, { timeout: 5_000 }).toBeDefined();
    const deadline = Date.parse((await queue.status(id))!.ref!.deadlineAt!);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // several holds and wakes
    // A wake attaches with what is left of the timeout, and with at least 5 s for a last read
    // (run.ts LAST_READ_MS): the deadline moves by that much at most, never on and on.
    expect(Date.parse((await queue.status(id))!.ref!.deadlineAt!) - deadline).toBeLessThan(5_500);
    const settled = await queue.settled(id, { signal: AbortSignal.timeout(15_000) });
    expect(["failed", "incomplete"]).toContain(settled.state.status);
    expect(Date.now()).toBeLessThan(deadline + 5_000 + 3_000);
  } finally {
    await worker.close();
    await queue.close();
    await api.close();
  }
}, 30_000);

it("a deferred job resumed past its deadline still reads the result its provider finished meanwhile", async () => {
  let up = false;
  const api = await startLoopback((request, response) => {
    if (request.method === "POST") return reply(response, 200, invoked("job_d"));
    if (!up) return reply(response, 503, { error: "down" });
    return reply(response, 200, completed("job_d"));
  });
  const setup = { prefix: "wd2:", queueName: "wd2" };
  const queue = createResearchQueue({ redis: redis.client(), client: hostedClient(api.url), ...setup });
  const worker = createResearchWorker({
    redis: redis.client(),
    client: hostedClient(api.url),
    ...setup,
    wakeBackoff: { minMs: 50, maxMs: 100 },
  });
  try {
    const { id } = await queue.enqueue(
      { model: HOSTED, query: "q", timeoutMs: 1_500 },
      { idempotencyKey: "k" },
    );
    const deferred = await queue.settled(id, { signal: AbortSignal.timeout(10_000) });
    expect(deferred.state.status).toBe("deferred");
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // past the job's deadline
    up = true;
    await queue.resume(id);
    const settled = await queue.settled(id, { signal: AbortSignal.timeout(10_000) });
    expect(settled.state.status).toBe("completed");
    expect(settled.result?.report).toBe("Report of job_d.");
  } finally {
    await worker.close();
    await queue.close();
    await api.close();
  }
}, 30_000);
