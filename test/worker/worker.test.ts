import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyConflictError, Sonde, UnknownModelError } from "../../src/index.js";
import { createRedisStore } from "../../src/redis/index.js";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
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
      await until(async () => (await Promise.all(handles.map((h) => queue.result(h.id)))).every(Boolean));
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
