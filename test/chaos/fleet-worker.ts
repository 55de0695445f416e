/**
 * One worker process of the fleet chaos test (bundled with esbuild and run by node): a
 * Sonde client whose portable jobs live in Redis and whose hosted, OpenAI and Gemini APIs are
 * the test's loopback fakes, driving the queues until it is SIGKILLed.
 */
import { Redis } from "ioredis";
import type { JobStore } from "../../providers/portable/index.js";
import { Sonde } from "../../src/index.js";
import { createRedisStore } from "../../src/redis/index.js";
import { createResearchWorker } from "../../src/worker/index.js";

const env = process.env as Record<string, string>;
const redis = new Redis({ host: "127.0.0.1", port: Number(env.REDIS_PORT), maxRetriesPerRequest: null });
const prefix = env.PREFIX!;
const store = createRedisStore(redis, { prefix });
// Counts calls sent again although their outcome was stored (a repeated receipted call): an
// intent written over a finished receipt. The test expects none.
const watched: JobStore = {
  ...store,
  async putReceipt(jobId, receipt, fence) {
    if (receipt.status === "intent") {
      const earlier = (await store.readReceipts(jobId)).find((r) => r.key === receipt.key);
      if (earlier && earlier.status !== "intent" && !earlier.repeat) await redis.incr(`${prefix}violations`);
    }
    return store.putReceipt(jobId, receipt, fence);
  },
};
const options = (clock?: () => Date) =>
  new Sonde({
    env: {},
    hosted: { apiKey: "hosted-key-0123456789abcdef", baseURL: env.HOSTED_URL! },
    openai: { apiKey: "sk-test-openai-0123456789abcdef", baseURL: `${env.OPENAI_URL}/v1` },
    gemini: { apiKey: "AIzaSyTestKey0123456789abcdefghijkl", baseURL: `${env.GEMINI_URL}/v1beta` },
    portable: { store: watched, leaseMs: 1_000 },
    retry: { attempts: 50, minDelayMs: 30, maxDelayMs: 120 },
    idleTimeoutMs: 5_000,
    ...(clock && { clock }),
  });
const drive = (queueName: string, client: Sonde) =>
  createResearchWorker({
    redis,
    client,
    prefix,
    queueName,
    name: env.WORKER_NAME!,
    concurrency: 3,
    lockDurationMs: 1_500,
    holdMs: 400,
    wakeBackoff: { minMs: 50, maxMs: 400 },
    // A hosted fake job left unpolled ends within a second (HOSTED_RUN_MS in the test).
    indeterminateSlotMs: 3_000,
    // The demo engine's calls cost nothing: a call cut off by SIGKILL may be sent again.
    repeatInterruptedCalls: true,
  });
drive(env.QUEUE!, options());
// OpenAI's streaming models were retired on 2026-07-23 (catalog): their jobs have a queue of
// their own, driven by a client whose clock reads a date before then.
drive(
  `${env.QUEUE}-streamed`,
  options(() => new Date(Date.now() - Number(env.STREAMED_CLOCK_SHIFT_MS))),
);
process.stdout.write("ready\n");
