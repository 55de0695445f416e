/**
 * `queue.enqueue` from plain JavaScript (or through an `any`): a call without the options
 * argument is refused with the typed error that says what is missing, not a TypeError
 * from destructuring.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { InvalidRequestError, Sonde } from "../../src/index.js";
import { createResearchQueue } from "../../src/worker/index.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

it("enqueue without options throws InvalidRequestError asking for an idempotencyKey", async () => {
  const queue = createResearchQueue({
    redis: redis.client(),
    client: new Sonde({ env: {} }),
    queueName: "eo",
  });
  try {
    const enqueue = queue.enqueue as (request: unknown, options?: unknown) => Promise<unknown>;
    for (const options of [undefined, {}]) {
      const error = await enqueue({ model: "portable:demo/offline", query: "q" }, options).catch(
        (e: unknown) => e,
      );
      expect(InvalidRequestError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/enqueue needs an idempotencyKey/);
    }
    expect(await queue.queue.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0 });
  } finally {
    await queue.close();
  }
});
