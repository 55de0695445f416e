/**
 * What a worker makes of a job-creating request that failed, on the hosted job API (one job in
 * flight per organization, the fleet's default limit). A failure that proves the provider did
 * not take it (a refused connection, a status line the engine reads as "not created") is tried
 * again later as a job never submitted when it is retryable, and ends the job `failed` when it
 * is not; a failure whose outcome is unknown (no answer, a gateway's 502) ends it
 * `indeterminate`: never sent again, its slot kept while it may be running.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { completed, HOSTED, hostedClient, invoked, reply } from "../helpers/hosted-fake.js";
import { type RecordedRequest, startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const promptOf = (request: RecordedRequest) =>
  (JSON.parse(request.body) as { inputs: { prompt: string } }).inputs.prompt;

function setup(
  prefix: string,
  baseURL: string,
  options: { indeterminateSlotMs?: number; cancelPollMs?: number } = {},
) {
  const queue = createResearchQueue({
    redis: redis.client(),
    client: hostedClient(baseURL),
    prefix,
    queueName: prefix.slice(0, -1),
  });
  const worker = createResearchWorker({
    redis: redis.client(),
    client: hostedClient(baseURL),
    prefix,
    queueName: prefix.slice(0, -1),
    wakeBackoff: { minMs: 200, maxMs: 400 },
    ...options,
  });
  const settled = (id: string) => queue.settled(id, { signal: AbortSignal.timeout(10_000) });
  const enqueue = (query: string) => queue.enqueue({ model: HOSTED, query }, { idempotencyKey: query });
  return {
    queue,
    settled,
    enqueue,
    slot: (id: string) => redis.client().zscore(`${prefix}slots:hosted`, id),
    async close() {
      await worker.close();
      await queue.close();
    },
  };
}

describe("a create the provider certainly did not take", () => {
  it("retryable (a 503 that names no job): tried again as never submitted, its slot given back meanwhile, not indeterminate", async () => {
    const api = await startLoopback((request, response) => {
      if (request.method === "POST") {
        const posts = api.requests.filter((r) => r.method === "POST").length;
        if (posts <= 2) return reply(response, 503, { error: { message: "busy, try later" } });
        return reply(response, 200, invoked("job_1"));
      }
      return reply(response, 200, completed("job_1"));
    });
    const fleet = setup("sb1:", api.url);
    try {
      const { id } = await fleet.enqueue("Refused twice");
      // Between tries: not marked as sent, waiting for a wake, holding no slot.
      await expect.poll(async () => (await fleet.queue.status(id))?.failures, { timeout: 5_000 }).toBe(1);
      const between = (await fleet.queue.status(id))!;
      expect(between).toMatchObject({ status: "queued" });
      expect(between.submittingAt).toBeUndefined();
      expect(await fleet.slot(id)).toBeNull();
      const { state, result } = await fleet.settled(id);
      expect(state.status).toBe("completed");
      expect(result?.report).toBe("Report of job_1.");
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(3);
    } finally {
      await fleet.close();
      await api.close();
    }
  });

  it("retryable (a refused connection): sent once the service listens, never indeterminate", async () => {
    // A port nothing listens on yet: the invoke is refused before any byte leaves.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
    const { port } = free.address() as AddressInfo;
    await new Promise((resolve) => free.close(resolve));
    const fleet = setup("sb2:", `http://127.0.0.1:${port}`);
    let server: Server | undefined;
    const posts: string[] = [];
    try {
      const { id } = await fleet.enqueue("Nobody listening yet");
      await expect.poll(async () => (await fleet.queue.status(id))?.failures, { timeout: 5_000 }).toBe(1);
      expect((await fleet.queue.status(id))?.submittingAt).toBeUndefined();
      server = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk) => {
          body += chunk;
        });
        request.on("end", () => {
          if (request.method === "POST") {
            posts.push(body);
            return reply(response, 200, invoked("job_2"));
          }
          reply(response, 200, completed("job_2"));
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, "127.0.0.1", resolve));
      const { state } = await fleet.settled(id);
      expect(state.status).toBe("completed");
      expect(posts).toHaveLength(1);
    } finally {
      await fleet.close();
      server?.closeAllConnections();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    }
  });

  it("not retryable (a 401): failed once with the typed error, no longer marked as sent, its slot given back", async () => {
    const api = await startLoopback((request, response) => {
      if (request.method === "POST" && promptOf(request) === "Bad key")
        return reply(response, 401, { error: { message: "invalid api key" } });
      if (request.method === "POST") return reply(response, 200, invoked("job_3"));
      return reply(response, 200, completed("job_3"));
    });
    const fleet = setup("sb3:", api.url);
    try {
      const refused = await fleet.enqueue("Bad key");
      const { state } = await fleet.settled(refused.id);
      expect(state).toMatchObject({ status: "failed", error: { code: "authentication" } });
      expect(state.submittingAt).toBeUndefined();
      expect(await fleet.slot(refused.id)).toBeNull();
      const events = await fleet.queue.events.read(refused.id);
      expect(events.map((e) => e.type)).toEqual(["error", "done"]);
      // The fleet's one hosted slot went back: the next job runs.
      const next = await fleet.enqueue("Next job");
      expect((await fleet.settled(next.id)).state.status).toBe("completed");
      expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(2);
    } finally {
      await fleet.close();
      await api.close();
    }
  });
});

describe("a create whose outcome is unknown", () => {
  it("no answer, or a gateway's 502: indeterminate, never sent again, its slot kept until such a run would be over", async () => {
    const api = await startLoopback((request, response) => {
      if (request.method === "POST" && promptOf(request) === "No answer") {
        response.socket?.destroy();
        return;
      }
      if (request.method === "POST" && promptOf(request) === "Gateway")
        return reply(response, 502, { error: { message: "bad gateway" } });
      if (request.method === "POST") return reply(response, 200, invoked("job_4"));
      return reply(response, 200, completed("job_4"));
    });
    const fleet = setup("sb4:", api.url, { indeterminateSlotMs: 600 });
    try {
      for (const query of ["No answer", "Gateway"]) {
        const sentAfter = Date.now();
        const { id } = await fleet.enqueue(query);
        const { state } = await fleet.settled(id);
        expect(state).toMatchObject({ status: "indeterminate", error: { code: "indeterminate_submission" } });
        expect(state.error?.message).toMatch(/did not (resend|invoke again)/);
        // It may be running at the provider: the hosted slot lapses only after indeterminateSlotMs.
        const lapses = Number(await fleet.slot(id));
        expect(lapses).toBeGreaterThanOrEqual(sentAfter + 600);
        expect(lapses).toBeLessThanOrEqual(Date.now() + 600);
        // No `done`: nobody knows how it ended.
        expect((await fleet.queue.events.read(id)).filter((e) => e.type === "done")).toEqual([]);
      }
      // Nothing is sent again, however long one waits; the next job runs once the slot lapses.
      const next = await fleet.enqueue("After them");
      expect((await fleet.settled(next.id)).state.status).toBe("completed");
      const posts = api.requests.filter((r) => r.method === "POST").map(promptOf);
      expect(posts).toEqual(["No answer", "Gateway", "After them"]);
    } finally {
      await fleet.close();
      await api.close();
    }
  });
});

describe("a cancel that lands while the create is in flight", () => {
  it("is indeterminate, not cancelled: the provider may have taken the create; it is never sent again and keeps its slot", async () => {
    // Takes the invoke and never answers it.
    const api = await startLoopback(() => {});
    const fleet = setup("sb5:", api.url, { indeterminateSlotMs: 60_000, cancelPollMs: 50 });
    try {
      const { id } = await fleet.enqueue("Cancelled mid-create");
      await expect.poll(() => api.requests.length, { timeout: 5_000 }).toBe(1);
      const sentAt = Date.now();
      await fleet.queue.cancel(id);
      const { state, result } = await fleet.settled(id);
      // The job's own cancel() can only abandon the request: it said so.
      expect(state.cancelOutcome).toMatchObject({ outcome: "transport-only" });
      expect(state).toMatchObject({ status: "indeterminate", error: { code: "indeterminate_submission" } });
      expect(state.error?.message).toContain("look for it in the provider account");
      expect(result).toBeUndefined();
      // Nothing claims an end nobody knows: no `done`, no `cancelled` status.
      const events = await fleet.queue.events.read(id);
      expect(events.filter((e) => e.type === "done" || e.type === "status")).toEqual([]);
      // It may be running (and billing) at the provider: the fleet's one hosted slot stays taken.
      expect(Number(await fleet.slot(id))).toBeGreaterThanOrEqual(sentAt + 50_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(api.requests.map((r) => `${r.method} ${promptOf(r)}`)).toEqual(["POST Cancelled mid-create"]);
    } finally {
      await fleet.close();
      await api.close();
    }
  });
});
