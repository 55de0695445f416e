/**
 * The managed engines on real runtimes: Node, Bun, Deno and workerd each run every case in
 * cases.ts against the built package, one process per runtime, all at once, against the
 * loopback fakes; each case is then asserted here, per runtime. Run after `npm run build`
 * (`npm run test:runtimes`, part of `npm test`). A runtime that cannot run a case must be
 * listed in LIMITS with the reason, which the output shows (and which is checked: the case must still fail there); anything else failing fails.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESPONSE_ID } from "../openai/transcript.js";
import {
  cases,
  GEMINI_KEY,
  HOSTED_KEY,
  OPENAI_KEY,
  OPENROUTER_KEY,
  PERPLEXITY_KEY,
  type PlainEvent,
  type Run,
} from "./cases.js";
import { type Fakes, geminiTranscript, hosted, openaiPoll, openaiTranscript, startFakes } from "./fakes.js";
import {
  bundleMainEntry,
  bundleWorker,
  type RuntimeRun,
  runBun,
  runDeno,
  runNode,
  runWorkerd,
  scratchApp,
} from "./launch.js";

/**
 * `workerd`: a `sonde/core` app bundled without nodejs_compat (no Node built-in at all).
 * `workerd-main`: a `new Sonde()` app, bundled and run with nodejs_compat.
 */
const RUNTIMES = ["node", "bun", "deno", "workerd", "workerd-main"] as const;
type Runtime = (typeof RUNTIMES)[number];

/** Cases a runtime cannot run, and why (shown as skipped with the reason). None today. */
const LIMITS: Partial<Record<Runtime, Record<string, string>>> = {};

let fakes: Fakes;
let app: string;
const runs = new Map<string, RuntimeRun>();
let mainWithoutCompat: unknown;

beforeAll(async () => {
  fakes = await startFakes(RUNTIMES);
  app = scratchApp();
  const [main, worker, workerMain] = await Promise.all([
    bundleMainEntry(app),
    bundleWorker(app, "worker-entry.ts"),
    bundleWorker(app, "worker-main-entry.ts", true),
  ]);
  const all = await Promise.all([
    runNode(app, main, fakes.url),
    runBun(app, main, fakes.url),
    runDeno(app, main, fakes.url),
    runWorkerd(app, worker, fakes.url),
    runWorkerd(app, workerMain, fakes.url, { runtime: "workerd-main", flags: ["nodejs_compat"] }),
  ]);
  mainWithoutCompat = await bundleWorker(app, "worker-main-entry.ts").catch((error: unknown) => error);
  for (const run of all) {
    runs.set(run.runtime, run);
    const cases = run.results?.map((r) => `${r.name} ${r.error ? "threw" : "ran"} in ${r.ms} ms`) ?? [];
    console.log(
      `${run.runtime}: ${run.failure ? "FAILED to run" : "ran"} in ${run.ms} ms\n  ${cases.join("\n  ")}`,
    );
  }
}, 180_000);

afterAll(async () => {
  await fakes?.close();
  if (app) rmSync(app, { recursive: true, force: true });
});

const texts = (events: PlainEvent[]) =>
  events.map((event) => (event.type === "text" ? event.delta : "")).join("");
const types = (events: PlainEvent[]) => events.map((event) => event.type);

type Cancelled = { outcome: unknown; events: PlainEvent[]; status: string };

/** A cancelled running job: the provider confirmed it, and the stream ended `cancelled`. */
function expectCancelled(observed: Cancelled): void {
  expect(observed.outcome).toMatchObject({ outcome: "cancelled" });
  expect(observed.status).toBe("cancelled");
  expect(observed.events.at(-1)).toEqual({ type: "done", status: "cancelled" });
}

function expectIncreasing(seqs: number[]): void {
  for (let i = 1; i < seqs.length; i++) expect(seqs[i], `seq at ${i}`).toBeGreaterThan(seqs[i - 1]!);
}

/** One uninterrupted run and one cut inside a UTF-8 character then resumed: the same job. */
function expectResumedExactlyOnce(
  observed: { clean: Run; dropped: Run },
  report: string,
  requests: string[],
) {
  const { clean, dropped } = observed;
  expect(clean.status).toBe("completed");
  expect(clean.report).toBe(report);
  expect(dropped.report, "report after a drop differs from the uninterrupted one").toBe(clean.report);
  // Exactly once and in order: the same events, field for field (cursors included).
  expect(dropped.events).toEqual(clean.events);
  expect(types(dropped.events).filter((type) => type === "done")).toEqual(["done"]);
  expectIncreasing(dropped.seqs);
  expect(
    requests.filter((r) => r.startsWith("POST")),
    "one submission, never two",
  ).toHaveLength(1);
  expect(requests.some((r) => r.startsWith("GET") && r.includes("stream=true"))).toBe(true);
}

const checks: Record<string, (observed: never, runtime: Runtime) => void> = {
  "openai: streaming job, mid-stream drop and resume": (observed: { clean: Run; dropped: Run }, runtime) => {
    expectResumedExactlyOnce(observed, openaiTranscript.report, fakes.requests(runtime, "openai-drop"));
    expect(observed.clean.citations).toBeGreaterThan(0);
    expect(fakes.requests(runtime, "openai-drop").some((r) => r.includes("starting_after="))).toBe(true);
  },
  "openai: result() alone over a dropped stream": (
    observed: { alone: unknown; iterated: unknown },
    runtime,
  ) => {
    expect(observed.alone).toEqual(observed.iterated);
    expect(observed.alone).toMatchObject({ report: openaiTranscript.report, status: "completed" });
    const requests = fakes.requests(runtime, "openai-alone");
    expect(requests.filter((r) => r.startsWith("POST"))).toHaveLength(1);
    expect(requests.some((r) => r.startsWith("GET") && r.includes("starting_after="))).toBe(true);
  },
  "openai: poll-only job": (observed: Run, runtime) => {
    expect(observed.report).toBe(openaiPoll.expected.report);
    expect(observed.status).toBe("completed");
    expect(observed.events).toContainEqual({ type: "status", status: "running" });
    expect(observed.events.at(-1)).toEqual({ type: "done", status: "completed" });
    expectIncreasing(observed.seqs);
    const requests = fakes.requests(runtime, "openai-poll");
    expect(requests.filter((r) => r.startsWith("POST"))).toHaveLength(1);
    expect(requests.filter((r) => r.startsWith("GET")).length).toBeGreaterThanOrEqual(3);
  },
  "openai: cancel a running job": (observed: Cancelled, runtime) => {
    expectCancelled(observed);
    const cancels = fakes.requests(runtime, "openai-cancel").filter((r) => /^POST .*\/cancel/.test(r));
    expect(cancels).toEqual([`POST /v1/responses/${openaiPoll.queued.id}/cancel`]);
  },
  "openai: ref round-trip into a fresh client": (
    observed: { first: PlainEvent[]; refJson: string; rest: Run },
    runtime,
  ) => {
    expect(observed.refJson).not.toContain(OPENAI_KEY);
    expect(JSON.parse(observed.refJson)).toMatchObject({ v: 1, provider: "openai", jobId: RESPONSE_ID });
    expect(observed.rest.report).toBe(openaiTranscript.report);
    // Every delta exactly once across the two clients: none repeated, none lost.
    expect(texts(observed.first) + texts(observed.rest.events)).toBe(openaiTranscript.report);
    expect(observed.rest.events.at(-1)).toEqual({ type: "done", status: "completed" });
    const requests = fakes.requests(runtime, "openai-ref");

    expect(requests.filter((r) => r.startsWith("POST"))).toHaveLength(1);
    // The fresh client re-reads the stream and delivers only what follows the ref's position.
    expect(requests.some((r) => r.startsWith("GET") && r.includes("stream=true"))).toBe(true);
  },
  "sonde/testing: mockResearch": (
    observed: { report: string; first: PlainEvent[]; refJson: string; rest: Run },
    runtime,
  ) => {
    expect(observed.rest.report).toBe(observed.report);
    expect(observed.rest.citations).toBe(1);
    expect(observed.rest.events.at(-1)).toEqual({ type: "done", status: "completed" });
    expect(texts(observed.first) + texts(observed.rest.events)).toBe(observed.report);
    expect(observed.refJson).not.toContain(OPENAI_KEY);
    expect(fakes.requests(runtime, "mock"), "the mock let a request through").toEqual([]);
  },
  "gemini: streaming job, mid-stream drop and resume": (observed: { clean: Run; dropped: Run }, runtime) => {
    const report = observed.clean.report;
    expect(report.length).toBeGreaterThan(100);
    expect(geminiTranscript.includes(JSON.stringify(report.slice(0, 20)).slice(1, -1))).toBe(true);
    expectResumedExactlyOnce(observed, report, fakes.requests(runtime, "gemini-drop"));
    expect(fakes.requests(runtime, "gemini-drop").some((r) => r.includes("last_event_id="))).toBe(true);
    expect(JSON.stringify(observed)).not.toContain(GEMINI_KEY);
  },
  "openrouter: streaming job": (observed: Run, runtime) => {
    expect(observed.report).toBe("Due-diligence duties were postponed to 2027[1][2].");
    expect(observed.status).toBe("completed");
    expect(observed.citations).toBe(2);
    expect(observed.usage).toEqual({ costUSD: 0.41, costSource: "provider" });
    expect(types(observed.events).filter((type) => type === "text").length).toBeGreaterThan(1);
    expectIncreasing(observed.seqs);
    expect(JSON.stringify(observed)).not.toContain(OPENROUTER_KEY);
    expect(fakes.requests(runtime, "openrouter-stream")).toEqual(["POST /api/v1/chat/completions"]);
  },
  "perplexity: streaming job": (observed: Run, runtime) => {
    expect(observed.report).toBe("Builder is $20/month flat [web:11].");
    expect(observed.status).toBe("completed");
    expect(observed.citations).toBe(1);
    expect(observed.usage.costSource).toBe("provider");
    expect(types(observed.events)).toEqual(
      // biome-ignore format: one event type per slot, as the Node contract test lists them
      // The last two searches: the final body's search and page read the stream never showed.
      ["created", "status", "phase", "thinking", "thinking", "phase", "search", "search", "usage", "phase", "text", "text", "citation", "search", "search", "usage", "status", "done"],
    );
    expect(JSON.stringify(observed)).not.toContain(PERPLEXITY_KEY);
    expect(fakes.requests(runtime, "perplexity-stream")).toEqual(["POST /v1/agent"]);
  },
  "hosted: poll-only job": (observed: Run, runtime) => {
    expect(observed.report).toBe((hosted.completed.result as { content: string }).content);
    expect(observed.citations).toBe(1);
    expect(observed.events).toContainEqual(expect.objectContaining({ type: "status", status: "running" }));
    expect(observed.events.at(-1)).toEqual({ type: "done", status: "completed" });
    expect(JSON.stringify(observed)).not.toContain(HOSTED_KEY);
    const requests = fakes.requests(runtime, "hosted-poll");
    expect(requests.filter((r) => r.startsWith("POST"))).toHaveLength(1);
    expect(requests.filter((r) => r.startsWith("GET")).length).toBeGreaterThanOrEqual(3);
  },
  "hosted: cancel a running job": (observed: Cancelled, runtime) => {
    expectCancelled(observed);
    const deletes = fakes.requests(runtime, "hosted-cancel").filter((r) => r.startsWith("DELETE"));
    expect(deletes).toEqual([`DELETE /v1/jobs/${hosted.queued.job_id}`]);
  },
};

it("every case has its assertions", () => {
  expect(Object.keys(checks).sort()).toEqual(Object.keys(cases).sort());
});

// The README's limit: a one-module bundle of the main entry also inlines the portable engine's
// lazily loaded page fetcher (undici, pdf.js, linkedom), whose Node built-ins workerd refuses
// without nodejs_compat. When this starts failing, the limit is gone: update the README.
it("workerd: the main entry bundled as one module needs nodejs_compat (sonde/core does not)", () => {
  expect(mainWithoutCompat).toBeInstanceOf(Error);
  expect(String(mainWithoutCompat)).toMatch(/Could not resolve "node:/);
});

describe.each(RUNTIMES)("%s", (runtime) => {
  it("starts and runs every case in one process", () => {
    const run = runs.get(runtime)!;
    expect(run.failure, `${runtime} did not run`).toBeUndefined();
    expect(run.results?.map((r) => r.name)).toEqual(Object.keys(cases));
  });
  for (const [name, check] of Object.entries(checks)) {
    const limit = LIMITS[runtime]?.[name];
    if (limit) {
      // A declared limit is checked, not skipped: the case must still fail there, with its reason
      // in the output; once it passes, the limit is gone and the README must say so.
      it(`${name} cannot run on ${runtime} (${limit})`, () => {
        const result = runs.get(runtime)!.results?.find((r) => r.name === name);
        expect(result?.error, `${runtime} now runs "${name}": remove its limit`).toBeDefined();
      });
      continue;
    }
    it(name, () => {
      const run = runs.get(runtime)!;
      const result = run.results?.find((r) => r.name === name);
      if (!result) throw new Error(`${runtime} did not run "${name}": ${run.failure ?? "no result"}`);
      if (result.error) throw new Error(`${runtime} could not run "${name}": ${result.error}`);
      check(result.observed as never, runtime);
    });
  }
  it("sent nothing the fakes did not expect", () => {
    expect(fakes.stray().filter((r) => r.includes(` /${runtime}/`))).toEqual([]);
  });
});
