/**
 * Fleet chaos, bounded for `npm test` (CHAOS_JOBS=60 for the full form): three worker
 * processes on one real Redis drive portable demo jobs and jobs on a loopback fake of the
 * hosted API while a worker is SIGKILLed every ~2 s (and restarted), and Redis itself is
 * killed and restarted mid-run (append-only file, fsync always). Every job must end exactly
 * once with the report of an uninterrupted run and no receipted portable call sent again (or, for a hosted job whose worker was killed
 * between its invoke and storing its ref, as `indeterminate`), no hosted job may be invoked
 * twice, and the hosted limit of one job in flight must hold across the fleet.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../providers/portable/index.js";
import { Sonde } from "../../src/index.js";
import { createResearchQueue } from "../../src/worker/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

const JOBS = Number(process.env.CHAOS_JOBS ?? 12);
const WORKERS = 3;
const root = fileURLToPath(new URL("../..", import.meta.url));
const bundle = `${root}node_modules/.cache/sonde-chaos/fleet-worker.mjs`;
const prefix = "chaos:";
const queueName = "chaos";

const DEMO_QUERIES = [
  "How do deep research agents verify their citations?",
  "What limits the energy density of sodium-ion batteries?",
  "How do heat pumps compare with gas boilers?",
  "Why do deep research agents need a budget?",
  "How are quotations checked against sources?",
  "What makes a research report verifiable?",
];

/** The hosted job API for many jobs: each completes on its fourth poll; counts invokes and jobs in flight. */
function hostedFake() {
  const jobs = new Map<string, { prompt: string; polls: number; done: boolean }>();
  const invokes = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server = startLoopback((request, response) => {
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method === "POST") {
      const prompt = (JSON.parse(request.body) as { inputs: { prompt: string } }).inputs.prompt;
      invokes.set(prompt, (invokes.get(prompt) ?? 0) + 1);
      const id = `job_${jobs.size + 1}`;
      jobs.set(id, { prompt, polls: 0, done: false });
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      return json(200, {
        job_id: id,
        status: "queued",
        agent_id: "agents.deep_research",
        poll_url: `/v1/jobs/${id}`,
        estimated_cost_usd: 6,
        created_at: new Date().toISOString(),
      });
    }
    const id = request.url.split("/").at(-1)!;
    const job = jobs.get(id);
    if (!job) return json(404, { error: { message: "no such job" } });
    if (++job.polls < 4) return json(200, { job_id: id, status: "running" });
    if (!job.done) {
      job.done = true;
      inFlight--;
    }
    return json(200, {
      job_id: id,
      status: "completed",
      result: {
        content: hostedReport(job.prompt),
        citations: [{ title: "Source", url: `https://example.org/${id}`, snippet: "…" }],
        charge_usd: 1.5,
      },
    });
  });
  return { server, invokes, maxInFlight: () => maxInFlight };
}
const hostedReport = (prompt: string) => `Findings for "${prompt}" [1].`;

let redis: RedisServer;
let hosted: ReturnType<typeof hostedFake>;
let loopback: Loopback;
const workers = new Set<ChildProcess>();

function spawnWorker(): ChildProcess {
  const child = spawn(process.execPath, [bundle], {
    env: {
      ...process.env,
      REDIS_PORT: String(redis.port),
      HOSTED_URL: loopback.url,
      PREFIX: prefix,
      QUEUE: queueName,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  workers.add(child);
  child.once("exit", () => workers.delete(child));
  return child;
}

beforeAll(async () => {
  mkdirSync(`${root}node_modules/.cache/sonde-chaos`, { recursive: true });
  await build({
    entryPoints: [`${root}test/chaos/fleet-worker.ts`],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile: bundle,
    external: ["ioredis", "bullmq", "msw", "msw/node"],
    loader: { ".lua": "text" },
    logLevel: "error",
  });
  redis = await startRedis({ persistent: true });
  hosted = hostedFake();
  loopback = await hosted.server;
}, 60_000);

afterAll(async () => {
  for (const child of workers) child.kill("SIGKILL");
  await loopback?.close();
  await redis?.stop();
});

describe("fleet chaos", () => {
  it(`${JOBS} jobs, ${WORKERS} workers SIGKILLed in turn, Redis restarted: every job ends once, as uninterrupted`, async () => {
    const client = new Sonde({
      env: {},
      hosted: { apiKey: "hosted-key-0123456789abcdef", baseURL: loopback.url },
    });
    const queue = createResearchQueue({ redis: redis.client(), client, prefix, queueName });
    const requests = Array.from({ length: JOBS }, (_, i) =>
      i % 3 === 2
        ? { model: "hosted:agents.deep_research", query: `Hosted question ${i}: what changed in 2025?` }
        : { model: "portable:demo/offline", query: `${DEMO_QUERIES[i % DEMO_QUERIES.length]} (${i})` },
    );
    const ids = await Promise.all(requests.map((r, i) => queue.enqueue(r, { idempotencyKey: `chaos-${i}` })));
    for (let i = 0; i < WORKERS; i++) spawnWorker();

    let kills = 0;
    let restartedRedis = false;
    const started = Date.now();
    const chaos = setInterval(() => {
      const victim = [...workers][Math.floor(Math.random() * workers.size)];
      if (victim) {
        victim.kill("SIGKILL");
        kills++;
      }
      spawnWorker();
    }, 2_000);
    try {
      const deadline = Date.now() + 120_000;
      while (true) {
        if (!restartedRedis && Date.now() - started > 2_500) {
          restartedRedis = true;
          await redis.restart();
        }
        const states = await Promise.all(ids.map((h) => queue.status(h.id).catch(() => undefined)));
        if (
          states.every(
            (s) =>
              s && ["completed", "incomplete", "failed", "indeterminate", "cancelled"].includes(s.status),
          )
        )
          break;
        if (Date.now() > deadline) {
          const counts = await queue.queue.getJobCounts();
          const failed = (await queue.queue.getFailed()).map((j) => j.failedReason);
          throw new Error(
            `not all jobs ended: ${JSON.stringify(states.map((s) => s?.status))} ${JSON.stringify(counts)} ${failed}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      clearInterval(chaos);
    }
    console.log(`fleet chaos: ${JOBS} jobs ended in ${Date.now() - started} ms, ${kills} workers killed`);
    expect(kills).toBeGreaterThan(0);
    expect(restartedRedis).toBe(true);

    const direct = new Sonde({ env: {}, portable: { store: createMemoryStore() } });
    let indeterminate = 0;
    for (const [i, handle] of ids.entries()) {
      const request = requests[i]!;
      const state = await queue.status(handle.id);
      const events = await queue.events.read(handle.id);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, n) => n));
      if (state?.status === "indeterminate") {
        // A worker was killed after marking the invoke as sent and before storing its ref: the
        // honest outcome is "look in the account", never a second invoke.
        expect(request.model.startsWith("hosted"), `job ${i} (portable starts are idempotent)`).toBe(true);
        expect(hosted.invokes.get(request.query) ?? 0).toBeLessThanOrEqual(1);
        expect(events.filter((e) => e.type === "done")).toHaveLength(0);
        indeterminate++;
        continue;
      }
      const result = await queue.result(handle.id);
      expect(result, `job ${i}: ${JSON.stringify(state)}`).toBeDefined();
      // Exactly once: contiguous seqs, one created, one done.
      expect(events.filter((e) => e.type === "done")).toHaveLength(1);
      expect(events.filter((e) => e.type === "created")).toHaveLength(1);
      if (request.model.startsWith("hosted")) {
        expect(result!.report).toBe(hostedReport(request.query));
        expect(hosted.invokes.get(request.query)).toBe(1);
      } else {
        const baseline = await direct.research.start(request).result();
        expect(result!.report).toBe(baseline.report);
        expect(result!.status).toBe(baseline.status);
      }
    }
    console.log(`fleet chaos: ${indeterminate} hosted jobs indeterminate (killed between invoke and ref)`);
    // No portable call was sent again once its outcome was stored.
    expect(Number((await redis.client().get(`${prefix}violations`)) ?? 0)).toBe(0);
    // Any hosted job invoked was invoked once.
    expect([...hosted.invokes.values()].every((n) => n === 1)).toBe(true);
    expect(hosted.maxInFlight()).toBe(1);
    await queue.close();
  }, 150_000);
});
