/**
 * The managed-engine contract cases, written for any runtime: only web APIs (fetch,
 * streams, timers), the built package (imported by each runtime's entry), and loopback
 * fakes at `base`. Each case returns what it observed as plain JSON; the Node harness
 * (runtimes.test.ts) asserts on it, so every runtime is held to the same expectations.
 */
import type { ResearchEvent, ResearchJob, SondeClient, SondeOptions } from "sonde";
import type { clearMocks, mockResearch } from "sonde/testing";

export interface RuntimeKit {
  /** The runtime's name: the fakes keep each runtime's state under `/<runtime>/`. */
  runtime: string;
  /** The loopback fakes, `http://127.0.0.1:<port>`. */
  base: string;
  /** A fresh client, as the entry under test builds one (`new Sonde` or `createSonde`). */
  client(options: SondeOptions): SondeClient;
  mockResearch: typeof mockResearch;
  clearMocks: typeof clearMocks;
}

export interface CaseResult {
  name: string;
  ms: number;
  observed?: unknown;
  /** What the case threw, with its stack: the runtime could not run it. */
  error?: string;
}

export const STREAM_MODEL = "openai:o4-mini-deep-research";
export const POLL_MODEL = "openai:gpt-5.5-pro";
export const GEMINI_MODEL = "gemini:deep-research-preview-04-2026";
export const OPENAI_KEY = "sk-test-runtime-0123456789abcdef";
export const HOSTED_MODEL = "hosted:agents.deep_research";
export const HOSTED_KEY = "hosted-test-runtime-0123456789abcdef";
export const OPENROUTER_MODEL = "openrouter:perplexity/sonar-deep-research";
export const OPENROUTER_KEY = "sk-or-v1-test-runtime-0123456789abcdef";
export const PERPLEXITY_MODEL = "perplexity:medium";
export const PERPLEXITY_KEY = "pplx-test-runtime-0123456789abcdef";
export const GEMINI_KEY = "AIzaSyTestRuntimeKey0123456789abcdef";
const QUERY = "What changed in EU battery regulation in 2025?";

/** An event as data: everything but the per-job `seq` and the provider payload. */
export type PlainEvent = ResearchEvent extends infer E
  ? E extends ResearchEvent
    ? Omit<E, "seq" | "rawEvent">
    : never
  : never;
const plain = (events: ResearchEvent[]): PlainEvent[] =>
  events.map(({ seq: _seq, rawEvent: _raw, ...rest }) => rest as PlainEvent);

export interface Run {
  events: PlainEvent[];
  seqs: number[];
  report: string;
  status: string;
  citations: number;
  usage: { costUSD: number; costSource: string };
  ms: number;
}

async function run(job: ResearchJob): Promise<Run> {
  const started = Date.now();
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  const result = await job.result();
  return {
    events: plain(events),
    seqs: events.map((event) => event.seq),
    report: result.report,
    status: result.status,
    citations: result.citations.length,
    usage: { costUSD: result.usage.costUSD, costSource: result.usage.costSource },
    ms: Date.now() - started,
  };
}

const common = {
  // OpenAI's streaming deep-research models shut down on 2026-07-23: a pinned clock validates them.
  clock: () => new Date("2026-06-01T00:00:00Z"),
  retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 10 },
  idleTimeoutMs: 5_000,
  env: {},
};
const openai = (kit: RuntimeKit, scenario: string) =>
  kit.client({
    ...common,
    openai: { apiKey: OPENAI_KEY, baseURL: `${kit.base}/${kit.runtime}/${scenario}/v1` },
  });
const gemini = (kit: RuntimeKit, scenario: string) =>
  kit.client({
    ...common,
    gemini: { apiKey: GEMINI_KEY, baseURL: `${kit.base}/${kit.runtime}/${scenario}/v1beta` },
  });

const hosted = (kit: RuntimeKit, scenario: string) =>
  kit.client({
    ...common,
    hosted: { apiKey: HOSTED_KEY, baseURL: `${kit.base}/${kit.runtime}/${scenario}` },
  });

const openrouter = (kit: RuntimeKit, scenario: string) =>
  kit.client({
    ...common,
    openrouter: { apiKey: OPENROUTER_KEY, baseURL: `${kit.base}/${kit.runtime}/${scenario}/api/v1` },
  });

const perplexity = (kit: RuntimeKit, scenario: string) =>
  kit.client({
    ...common,
    perplexity: { apiKey: PERPLEXITY_KEY, baseURL: `${kit.base}/${kit.runtime}/${scenario}` },
  });

/** Iterates a job and cancels it at its first `running` status. */
async function cancelWhileRunning(job: ResearchJob) {
  const events: ResearchEvent[] = [];
  let outcome: unknown;
  for await (const event of job) {
    events.push(event);
    if (event.type === "status" && event.status === "running" && outcome === undefined)
      outcome = await job.cancel();
  }
  return { outcome, events: plain(events), status: (await job.result()).status };
}

/** Stops iterating after `texts` text events and hands back the ref as JSON text. */
async function readThenRef(job: ResearchJob, texts: number) {
  const first: ResearchEvent[] = [];
  let seen = 0;
  let refJson = "";
  for await (const event of job) {
    first.push(event);
    if (event.type === "text" && ++seen === texts) {
      refJson = JSON.stringify(job.toRef());
      break;
    }
  }
  return { first: plain(first), refJson };
}

export const cases: Record<string, (kit: RuntimeKit) => Promise<unknown>> = {
  "openai: streaming job, mid-stream drop and resume": async (kit) => ({
    clean: await run(openai(kit, "openai-stream").research.start({ model: STREAM_MODEL, query: QUERY })),
    dropped: await run(openai(kit, "openai-drop").research.start({ model: STREAM_MODEL, query: QUERY })),
  }),
  "openai: result() alone over a dropped stream": async (kit) => {
    // Nobody iterates: the session joins each read's text deltas (loaded on first use).
    const alone = await openai(kit, "openai-alone")
      .research.start({ model: STREAM_MODEL, query: QUERY })
      .result();
    const iterated = await run(
      openai(kit, "openai-stream").research.start({ model: STREAM_MODEL, query: QUERY }),
    );
    return {
      alone: {
        report: alone.report,
        status: alone.status,
        citations: alone.citations.length,
        usage: { costUSD: alone.usage.costUSD, costSource: alone.usage.costSource },
      },
      iterated: {
        report: iterated.report,
        status: iterated.status,
        citations: iterated.citations,
        usage: iterated.usage,
      },
    };
  },
  "openai: poll-only job": (kit) =>
    run(openai(kit, "openai-poll").research.start({ model: POLL_MODEL, query: QUERY })),
  "openai: cancel a running job": (kit) =>
    cancelWhileRunning(openai(kit, "openai-cancel").research.start({ model: POLL_MODEL, query: QUERY })),
  "openai: ref round-trip into a fresh client": async (kit) => {
    const job = openai(kit, "openai-ref").research.start({ model: STREAM_MODEL, query: QUERY });
    const { first, refJson } = await readThenRef(job, 40);
    // A fresh client, as after a restart: only the JSON text of the ref carries over.
    const rest = await run(openai(kit, "openai-ref").research.attach(JSON.parse(refJson)));
    return { first, refJson, rest };
  },
  "sonde/testing: mockResearch": async (kit) => {
    const report = "# Findings\nSodium-ion cells reached 160 Wh/kg in 2025.";
    const citation = { url: "https://example.org/na-ion", title: "Na-ion" };
    kit
      .mockResearch(report, { citations: [citation], chunkSize: 7 })
      .whenQueryContains("sodium")
      .register();
    try {
      // The base URL is a loopback fake that records: a mock that failed to claim the job shows there.
      const job = openai(kit, "mock").research.start({
        model: POLL_MODEL,
        query: "Where is sodium-ion density?",
      });
      const { first, refJson } = await readThenRef(job, 1);
      const rest = await run(openai(kit, "mock").research.attach(JSON.parse(refJson)));
      return { report, first, refJson, rest };
    } finally {
      kit.clearMocks();
    }
  },
  "gemini: streaming job, mid-stream drop and resume": async (kit) => ({
    clean: await run(gemini(kit, "gemini-stream").research.start({ model: GEMINI_MODEL, query: QUERY })),
    dropped: await run(gemini(kit, "gemini-drop").research.start({ model: GEMINI_MODEL, query: QUERY })),
  }),
  "openrouter: streaming job": (kit) =>
    run(openrouter(kit, "openrouter-stream").research.start({ model: OPENROUTER_MODEL, query: QUERY })),
  "perplexity: streaming job": (kit) =>
    run(perplexity(kit, "perplexity-stream").research.start({ model: PERPLEXITY_MODEL, query: QUERY })),
  "hosted: poll-only job": (kit) =>
    run(hosted(kit, "hosted-poll").research.start({ model: HOSTED_MODEL, query: QUERY })),
  "hosted: cancel a running job": (kit) =>
    cancelWhileRunning(hosted(kit, "hosted-cancel").research.start({ model: HOSTED_MODEL, query: QUERY })),
};

/** Runs every case in turn; a case that throws is reported with its error, never dropped. */
export async function runCases(kit: RuntimeKit): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const [name, body] of Object.entries(cases)) {
    const started = Date.now();
    try {
      const observed = await body(kit);
      results.push({ name, ms: Date.now() - started, observed });
    } catch (error) {
      const detail =
        error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error);
      results.push({ name, ms: Date.now() - started, error: detail });
    }
  }
  return results;
}
