/**
 * Fleet chaos, bounded for `npm test` (CHAOS_JOBS=60 for the full form): three worker
 * processes on one real Redis drive jobs across five engines while a worker is SIGKILLed
 * every ~2 s (and restarted), and Redis itself is killed and restarted mid-run (append-only
 * file, fsync always): portable demo jobs, and jobs on loopback fakes of the hosted API,
 * OpenAI (streamed background responses, and the poll-only model), and Gemini's Deep
 * Research agent. Every job must end exactly once with the report of an uninterrupted run;
 * no receipted portable call may be sent again; every fake must see exactly one
 * job-creating POST per job (or, for a job whose worker was killed between sending it and
 * storing its ref, at most one, and the job `indeterminate`); the hosted limit of one job
 * in flight must hold across the fleet.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../providers/portable/index.js";
import { Sonde, type SondeOptions } from "../../src/index.js";
import { createResearchQueue, type ResearchQueue } from "../../src/worker/index.js";
import { bundleScript } from "../helpers/bundle.js";
import { invoked } from "../helpers/hosted-fake.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";
import { type FleetFake, geminiFake, openAIFake, openAITranscript } from "./fleet-fakes.js";

const JOBS = Number(process.env.CHAOS_JOBS ?? 15);
const WORKERS = 3;
let bundle: string;
const prefix = "chaos:";
const queueName = "chaos";
/** OpenAI's streaming models retired on 2026-07-23: their queue's clients read an earlier date. */
const STREAMED_CLOCK_SHIFT_MS = 200 * 86_400_000;
const streamedClock = () => new Date(Date.now() - STREAMED_CLOCK_SHIFT_MS);

const MODELS = [
  "portable:demo/offline",
  "hosted:agents.deep_research",
  "openai:gpt-5.5-pro",
  "openai:o4-mini-deep-research",
  "gemini:deep-research-preview-04-2026",
] as const;
type Model = (typeof MODELS)[number];
const STREAMED: Model = "openai:o4-mini-deep-research";

const DEMO_QUERIES = [
  "How do deep research agents verify their citations?",
  "What limits the energy density of sodium-ion batteries?",
  "How do heat pumps compare with gas boilers?",
  "Why do deep research agents need a budget?",
  "How are quotations checked against sources?",
  "What makes a research report verifiable?",
];

/** A hosted job runs until its fourth poll, or for this long if nobody polls it (fleet-worker's indeterminateSlotMs is longer). */
const HOSTED_RUN_MS = 1_000;

/** The hosted job API for many jobs: counts invokes, and jobs in flight at each invoke. */
function hostedFake() {
  const jobs = new Map<string, { prompt: string; polls: number; done: boolean; invokedAt: number }>();
  const invokes = new Map<string, number>();
  let maxInFlight = 0;
  const running = (job: { done: boolean; invokedAt: number }) =>
    !job.done && Date.now() < job.invokedAt + HOSTED_RUN_MS;
  const server = startLoopback((request, response) => {
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method === "POST") {
      const prompt = (JSON.parse(request.body) as { inputs: { prompt: string } }).inputs.prompt;
      invokes.set(prompt, (invokes.get(prompt) ?? 0) + 1);
      const id = `job_${jobs.size + 1}`;
      maxInFlight = Math.max(maxInFlight, [...jobs.values()].filter(running).length + 1);
      jobs.set(id, { prompt, polls: 0, done: false, invokedAt: Date.now() });
      return json(200, invoked(id));
    }
    const id = request.url.split("/").at(-1)!;
    const job = jobs.get(id);
    if (!job) return json(404, { error: { message: "no such job" } });
    if (++job.polls < 4 && running(job)) return json(200, { job_id: id, status: "running" });
    job.done = true;
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
let openai: FleetFake;
let gemini: FleetFake;
const workers = new Set<ChildProcess>();

/** A client as the fleet's own are set up (keys and fake URLs; no portable store of its own). */
const clientOptions = (): SondeOptions => ({
  env: {},
  hosted: { apiKey: "hosted-key-0123456789abcdef", baseURL: loopback.url },
  openai: { apiKey: "sk-test-openai-0123456789abcdef", baseURL: `${openai.loopback.url}/v1` },
  gemini: { apiKey: "AIzaSyTestKey0123456789abcdefghijkl", baseURL: `${gemini.loopback.url}/v1beta` },
  retry: { attempts: 50, minDelayMs: 30, maxDelayMs: 120 },
});

const names = new Map<ChildProcess, string>();
let spawned = 0;

function spawnWorker(): ChildProcess {
  const name = `worker-${++spawned}`;
  const child = spawn(process.execPath, [bundle], {
    env: {
      ...process.env,
      WORKER_NAME: name,
      REDIS_PORT: String(redis.port),
      HOSTED_URL: loopback.url,
      OPENAI_URL: openai.loopback.url,
      GEMINI_URL: gemini.loopback.url,
      STREAMED_CLOCK_SHIFT_MS: String(STREAMED_CLOCK_SHIFT_MS),
      PREFIX: prefix,
      QUEUE: queueName,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  workers.add(child);
  names.set(child, name);
  child.once("exit", () => workers.delete(child));
  return child;
}

/** Resolves when a worker process says it is driving its queues. */
const ready = (child: ChildProcess) =>
  new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`a worker exited (${code}) before it was ready`)));
  });

beforeAll(async () => {
  bundle = await bundleScript("test/chaos/fleet-worker.ts", "fleet-worker");
  redis = await startRedis({ persistent: true });
  hosted = hostedFake();
  loopback = await hosted.server;
  openai = await openAIFake();
  gemini = await geminiFake();
}, 60_000);

afterAll(async () => {
  for (const child of workers) child.kill("SIGKILL");
  await loopback?.close();
  await openai?.loopback.close();
  await gemini?.loopback.close();
  await redis?.stop();
});

const FINAL = ["completed", "incomplete", "failed", "indeterminate", "cancelled"];

/**
 * Kills a worker every 2 s from 1 s on (starting a new one) and Redis once, until every job
 * ended. The first victim holds a streamed OpenAI or Gemini job, so a stream is always taken
 * over mid-way; later ones are random.
 */
async function underChaos(queues: ResearchQueue[], ids: { id: string; queue: number }[]) {
  let kills = 0;
  let restartedRedis = false;
  const started = Date.now();
  const streamedHolder = async () => {
    const active = (await Promise.all(queues.map((q) => q.queue.getActive()))).flat();
    const holders = new Set<string>();
    for (const job of active) {
      const state = await queues[0]!.status(job.data.id as string);
      if (state && (state.model === STREAMED || state.model.startsWith("gemini")) && job.processedBy)
        holders.add(job.processedBy);
    }
    return [...workers].find((child) => holders.has(names.get(child)!));
  };
  const kill = (victim = [...workers][Math.floor(Math.random() * workers.size)]) => {
    if (victim) {
      victim.kill("SIGKILL");
      kills++;
    }
    spawnWorker();
  };
  let chaos: ReturnType<typeof setInterval> | undefined;
  const first = setTimeout(async () => {
    kill(await streamedHolder().catch(() => undefined));
    chaos = setInterval(() => kill(), 2_000);
  }, 1_000);
  try {
    const deadline = Date.now() + 120_000;
    while (true) {
      if (!restartedRedis && Date.now() - started > 1_500) {
        restartedRedis = true;
        await redis.restart();
      }
      const states = await Promise.all(ids.map((h) => queues[h.queue]!.status(h.id).catch(() => undefined)));
      if (states.every((s) => s && FINAL.includes(s.status))) break;
      if (Date.now() > deadline) {
        const counts = await Promise.all(queues.map((q) => q.queue.getJobCounts()));
        throw new Error(
          `not all jobs ended: ${JSON.stringify(states.map((s) => s?.status))} ${JSON.stringify(counts)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    clearTimeout(first);
    clearInterval(chaos);
  }
  console.log(`fleet chaos: ${ids.length} jobs ended in ${Date.now() - started} ms, ${kills} workers killed`);
  return { kills, restartedRedis };
}

/** Job-creating POSTs the fakes saw for a request. */
const createsOf = (model: Model, query: string) =>
  model.startsWith("hosted")
    ? (hosted.invokes.get(query) ?? 0)
    : model.startsWith("openai")
      ? (openai.creates.get(query) ?? 0)
      : model.startsWith("gemini")
        ? (gemini.creates.get(query) ?? 0)
        : 0;

describe("fleet chaos", () => {
  it(`${JOBS} jobs on five engines, ${WORKERS} workers SIGKILLed in turn, Redis restarted: every job ends once, as uninterrupted`, async () => {
    const queues = [
      createResearchQueue({ redis: redis.client(), client: new Sonde(clientOptions()), prefix, queueName }),
      createResearchQueue({
        redis: redis.client(),
        client: new Sonde({ ...clientOptions(), clock: streamedClock }),
        prefix,
        queueName: `${queueName}-streamed`,
      }),
    ];
    // Gemini's fake serves one recorded interaction: its uninterrupted run, before any chaos.
    const geminiBaseline = await new Sonde(clientOptions()).research
      .start({ model: "gemini:deep-research-preview-04-2026", query: "Uninterrupted baseline" })
      .result();
    const requests = Array.from({ length: JOBS }, (_, i) => {
      const model = MODELS[i % MODELS.length]!;
      const query = model.startsWith("portable")
        ? `${DEMO_QUERIES[i % DEMO_QUERIES.length]} (${i})`
        : `Question ${i} for ${model}: what changed in 2025?`;
      return { model, query };
    });
    // Workers up first, then jobs: the chaos measures the fleet, not Node's start-up.
    await Promise.all(Array.from({ length: WORKERS }, () => ready(spawnWorker())));
    const ids = await Promise.all(
      requests.map(async (r, i) => {
        const queue = r.model === STREAMED ? 1 : 0;
        const { id } = await queues[queue]!.enqueue(r, { idempotencyKey: `chaos-${i}` });
        return { id, queue };
      }),
    );
    const { kills, restartedRedis } = await underChaos(queues, ids);
    expect(kills).toBeGreaterThan(0);
    expect(restartedRedis).toBe(true);

    const direct = new Sonde({ env: {}, portable: { store: createMemoryStore() } });
    const outcomes: Record<string, number> = {};
    for (const [i, handle] of ids.entries()) {
      const { model, query } = requests[i]!;
      const queue = queues[handle.queue]!;
      const state = await queue.status(handle.id);
      const events = await queue.events.read(handle.id);
      const label = `job ${i} (${model}): ${JSON.stringify(state)}`;
      expect(
        events.map((e) => e.seq),
        label,
      ).toEqual(events.map((_, n) => n));
      outcomes[`${model} ${state?.status}`] = (outcomes[`${model} ${state?.status}`] ?? 0) + 1;
      if (state?.status === "indeterminate") {
        // A worker was killed after marking the submission as sent and before storing its
        // ref: the honest outcome is "look in the account", never a second submission.
        expect(model.startsWith("portable"), `${label} (portable starts are idempotent)`).toBe(false);
        expect(createsOf(model, query)).toBeLessThanOrEqual(1);
        expect(events.filter((e) => e.type === "done")).toHaveLength(0);
        continue;
      }
      const result = await queue.result(handle.id);
      expect(result, label).toBeDefined();
      // Exactly once: contiguous seqs, one created, one done.
      expect(
        events.filter((e) => e.type === "done"),
        label,
      ).toHaveLength(1);
      expect(
        events.filter((e) => e.type === "created"),
        label,
      ).toHaveLength(1);
      const uninterrupted = model.startsWith("portable")
        ? await direct.research.start({ model, query }).result()
        : model.startsWith("gemini")
          ? geminiBaseline
          : {
              status: "completed",
              report: model.startsWith("hosted") ? hostedReport(query) : openAITranscript(query).report,
            };
      expect(result!.status, label).toBe(uninterrupted.status);
      expect(result!.report, label).toBe(uninterrupted.report);
      if (!model.startsWith("portable")) expect(createsOf(model, query), label).toBe(1);
    }
    console.log(
      `fleet chaos outcomes: ${JSON.stringify(outcomes)}; streamed jobs taken over by another worker: ` +
        `OpenAI ${openai.takeovers()}, Gemini ${gemini.takeovers()}`,
    );
    // No portable call was sent again once its outcome was stored.
    expect(Number((await redis.client().get(`${prefix}violations`)) ?? 0)).toBe(0);
    // No fake saw a job created twice, the jobs here or any other.
    for (const creates of [hosted.invokes, openai.creates, gemini.creates])
      expect([...creates.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    // The first victim held a streamed job: another worker took it over (resumed, replayed or polled).
    expect(openai.takeovers() + gemini.takeovers()).toBeGreaterThan(0);
    // One hosted job in flight at a time, counting jobs a killed worker may have left running.
    expect(hosted.maxInFlight()).toBe(1);
    await Promise.all(queues.map((q) => q.close()));
  }, 150_000);
});
