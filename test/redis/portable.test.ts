import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JobStore } from "../../providers/portable/index.js";
import { createRedisStore } from "../../src/redis/index.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";
import {
  type ChatCall,
  collect,
  gate,
  MODEL,
  portableClient,
  scriptedChat,
  scriptedFetcher,
  scriptedSearch,
} from "../portable/helpers.js";

const server = setupServer();
let redis: RedisServer;
beforeAll(async () => {
  server.listen({ onUnhandledFrame: "error" });
  redis = await startRedis();
});
afterEach(() => server.resetHandlers());
afterAll(async () => {
  server.close();
  await redis?.stop();
});

const QUERY = "How many bicycle commuters crossed the river bridge in 2024?";
const supportAll = (call: ChatCall) => ({
  checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
});
/** One Redis as seen from one process: its own connection, its own runners. */
const processStore = (name: string, prefix: string): JobStore => ({
  ...createRedisStore(redis.client(), { prefix }),
  id: `redis:${prefix}${name}`,
});

describe("portable jobs on the Redis store", () => {
  it("a stale lease holder (frozen past its lease, then resumed) cannot write; the takeover finishes the job", async () => {
    const baselineChat = scriptedChat({ check: supportAll });
    server.use(baselineChat.handler);
    const baseline = await portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store: processStore("baseline", "stale-base:"),
    })
      .research.start({ model: MODEL, query: QUERY })
      .result();
    server.resetHandlers();

    const frozen = gate();
    const resume = gate();
    const chat = scriptedChat({
      check: async (call, n) => {
        if (n === 0) {
          frozen.hit();
          await resume.opened; // A's process is frozen while its call is in flight
        }
        return supportAll(call);
      },
    });
    server.use(chat.handler);
    const leaseMs = 500;
    const refused: string[] = [];
    const a = processStore("A", "stale:");
    // A frozen process renews nothing; its timers do not run. Its late writes are observed.
    const storeA: JobStore = {
      ...a,
      renewLease: async () => true,
      putReceipt: (jobId, receipt, fence) =>
        a.putReceipt(jobId, receipt, fence).catch((error: Error) => {
          refused.push(`${error.name}:${receipt.key}`);
          throw error;
        }),
    };
    const clientA = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store: storeA,
      leaseMs,
    });
    const jobA = clientA.research.start({ model: MODEL, query: QUERY });
    const eventsA = collect(jobA).catch((error: unknown) => error);
    await frozen.reached;

    const clientB = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store: processStore("B", "stale:"),
      leaseMs,
    });
    const attached = clientB.research.attach(jobA.toRef(), { repeatInterruptedCalls: true });
    const resultB = await attached.result();
    expect(resultB.status).toBe("completed");
    expect(resultB.report).toBe(baseline.report);

    resume.open(); // A wakes up and tries to record the check it was making
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(refused).toEqual(["LeaseLostError:model:check"]);
    jobA.abort();
    await eventsA;
    const events = await a.readEvents(jobA.id!);
    expect(events.map((e) => e.index)).toEqual(events.map((_, i) => i));
    expect(new Set(events.map((e) => e.key)).size).toBe(events.length);
    expect(events.filter((e) => e.key === "status:terminal")).toHaveLength(1);
  });

  it("two processes on one Redis run one job once; the other tails it to the same result", async () => {
    const chat = scriptedChat({ check: supportAll });
    server.use(chat.handler);
    const [searchA, searchB] = [scriptedSearch(), scriptedSearch()];
    const request = { model: MODEL, query: QUERY, idempotencyKey: "bridge-redis" };
    const a = portableClient({
      search: searchA.backend,
      fetcher: scriptedFetcher().fetcher,
      store: processStore("A", "two:"),
    });
    const b = portableClient({
      search: searchB.backend,
      fetcher: scriptedFetcher().fetcher,
      store: processStore("B", "two:"),
    });
    const [jobA, jobB] = [a.research.start(request), b.research.start(request)];
    await Promise.all([collect(jobA), collect(jobB)]);
    expect(jobA.id).toBe(jobB.id);
    expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check", "write"]);
    expect(searchA.queries.length === 0 || searchB.queries.length === 0).toBe(true);
    expect((await jobA.result()).report).toBe((await jobB.result()).report);
  });
});
