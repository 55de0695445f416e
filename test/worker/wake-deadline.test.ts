/**
 * A poll-only job is held (its slot given back) and attached again on every wake. Each attach
 * set a new deadline, so a job whose provider never finished was polled forever, holding its
 * engine's fleet slot (one hosted job at a time by default: every other one waited behind it).
 * A wake now keeps the deadline the job's first run set.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { HOSTED, hostedClient, invoked, reply } from "../helpers/hosted-fake.js";
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
    // Each wake's attach computes what is left of it: a few milliseconds of drift at most.
    expect(Date.parse((await queue.status(id))!.ref!.deadlineAt!) - deadline).toBeLessThan(250);
    const settled = await queue.settled(id, { signal: AbortSignal.timeout(8_000) });
    expect(FINAL_OR_DEFERRED).toContain(settled.state.status);
    expect(Date.now()).toBeLessThan(deadline + 5_000);
  } finally {
    await worker.close();
    await queue.close();
    await api.close();
  }
}, 30_000);

const FINAL_OR_DEFERRED = ["failed", "incomplete"];
