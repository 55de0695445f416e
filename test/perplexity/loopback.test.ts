/**
 * Perplexity over real sockets: a submit whose connection is cut (or that times out)
 * is resent with the same idempotency key and yields one job; polls honour Retry-After.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { collect, fastRetry, transcript } from "./helpers.js";

const KEY = "pplx-test-0123456789abcdef";
const model = "perplexity:sonar-deep-research";
const query = "What changed in EU battery regulation in 2025?";
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const client = (baseURL: string, idleTimeoutMs = 2_000) =>
  new Sonde({ perplexity: { apiKey: KEY, baseURL }, retry: fastRetry, idleTimeoutMs, env: {} });

const { exchanges } = transcript("perplexity", "async-completed.json");
const [created, inProgress, completed] = exchanges.map((e) => JSON.stringify(e.response.body));

/** A server that creates one job per idempotency key, and misbehaves on the first submit as told. */
async function idempotentServer(firstSubmit: "cut" | "hang") {
  const jobsByKey = new Map<string, string>();
  let polls = 0;
  const loopback = await startLoopback((request, response) => {
    if (request.method === "POST") {
      const key = (JSON.parse(request.body) as { idempotency_key: string }).idempotency_key;
      // The job is created before the answer is lost: exactly the case the key protects.
      if (!jobsByKey.has(key)) jobsByKey.set(key, JSON.parse(created!).id);
      const submits = loopback.requests.filter((r) => r.method === "POST").length;
      if (submits === 1) {
        if (firstSubmit === "cut") response.socket?.destroy();
        return; // "hang": never answer
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(created);
      return;
    }
    polls++;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(polls === 1 ? inProgress : completed);
  });
  return { loopback, jobsByKey };
}

describe("perplexity async over a real socket", () => {
  for (const failure of ["cut", "hang"] as const) {
    it(`a first submit that is ${failure === "cut" ? "reset" : "timed out"} is resent with the same idempotency key, and there is exactly one job`, async () => {
      const { loopback, jobsByKey } = await idempotentServer(failure);
      server = loopback;
      const job = client(loopback.url, 200).research.start({ model, query });
      const events = await collect(job);
      const posts = loopback.requests.filter((r) => r.method === "POST");
      expect(posts).toHaveLength(2);
      const keys = posts.map((p) => (JSON.parse(p.body) as { idempotency_key: string }).idempotency_key);
      expect(keys[0]).toMatch(/^sonde-/);
      expect(keys[1]).toBe(keys[0]);
      expect(jobsByKey.size).toBe(1);
      expect(events.filter((e) => e.type === "created")).toHaveLength(1);
      expect(job.toRef()).toMatchObject({
        jobId: [...jobsByKey.values()][0],
        resume: { idempotencyKey: keys[0] },
      });
      expect((await job.result()).status).toBe("completed");
    });
  }

  it("waits at least Retry-After between polls", async () => {
    const pollTimes: number[] = [];
    server = await startLoopback((request, response) => {
      if (request.method === "POST") {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(created);
        return;
      }
      pollTimes.push(performance.now());
      if (pollTimes.length === 1) {
        response.writeHead(200, { "content-type": "application/json", "retry-after": "1" });
        response.end(inProgress);
      } else {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(completed);
      }
    });
    const result = await client(server.url).research.start({ model, query }).result();
    expect(result.status).toBe("completed");
    expect(pollTimes).toHaveLength(2);
    expect(pollTimes[1]! - pollTimes[0]!).toBeGreaterThanOrEqual(990);
  });
});
