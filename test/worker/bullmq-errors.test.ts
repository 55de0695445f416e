/**
 * BullMQ's own errors (here: its connection refused) reach the worker's `logger`, redacted,
 * instead of BullMQ's console prints.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { createResearchWorker } from "../../src/worker/index.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

it("a BullMQ connection error is heard by the logger", async () => {
  const heard: { message: string; data?: Record<string, unknown> }[] = [];
  const port = await closedPort();
  const worker = createResearchWorker({
    redis: redis.client(),
    connection: { host: "127.0.0.1", port, maxRetriesPerRequest: null, retryStrategy: () => 50 },
    client: new Sonde({ env: {} }),
    queueName: "errors",
    logger: { error: (message, data) => heard.push({ message, ...(data && { data }) }) },
  });
  try {
    const end = Date.now() + 10_000;
    while (heard.length === 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard.length).toBeGreaterThan(0);
    expect(heard[0]!.message).toMatch(/^sonde\/worker: BullMQ (worker|queue) error$/);
    expect(String(heard[0]!.data?.error)).toMatch(/ECONNREFUSED/);
  } finally {
    await Promise.race([worker.close(), new Promise((resolve) => setTimeout(resolve, 2_000))]);
  }
});
