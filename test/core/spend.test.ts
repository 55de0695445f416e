/**
 * The spend cap in the core, over a scripted engine: crossing it cancels once and ends the
 * job `incomplete` with a `cost-cap` gap and the partial report; a completion that wins
 * the cancel race completes whole; a failed cancel says the spend may go on. Plus what
 * validation and `estimate()` tell a user before the start.
 */
import { afterEach, describe, expect, it } from "vitest";
import { findModel } from "../../catalog/index.js";
import { emptyUsage } from "../../src/cost.js";
import type { ResearchEvent } from "../../src/events.js";
import { InvalidRequestError, Sonde, UnsupportedOptionError } from "../../src/index.js";
import { ResearchJob } from "../../src/job.js";
import type { CancelOutcome, EngineSession } from "../../src/provider.js";
import { capGap, SpendMeter } from "../../src/spend.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";
import { fakeSession, script } from "../helpers/fake-engine.js";

// o4-mini deep research: $8 per M output tokens, $10 per 1,000 searches.
const pricing = findModel("openai:o4-mini-deep-research")!.pricing;
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** What a job needs; `cancel` answers as the provider would. */
function init(cancel: () => Promise<CancelOutcome> = async () => ({ outcome: "cancelled" })) {
  return {
    provider: "openai" as const,
    model: "openai:o4-mini-deep-research",
    pricing,
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    logger: silent,
    clock: () => new Date(),
    timeoutMs: 60_000,
    cancel,
  };
}

function capped(session: EngineSession, maxCostUSD: number, cancel: () => Promise<CancelOutcome>) {
  return new ResearchJob({ ...init(cancel), session, maxCostUSD });
}

async function collect(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}

const textOf = (events: ResearchEvent[]) => events.map((e) => (e.type === "text" ? e.delta : "")).join("");
// 400 words of ~4 characters: ~400 tokens, ~$0.0032 of output at $8/M.
const words = script(400);

describe("spend cap in the job", () => {
  it("crossing the cap on streamed text cancels once and ends incomplete with the partial report", async () => {
    let cancels = 0;
    const job = capped(fakeSession({ events: words }), 0.001, async () => {
      cancels++;
      return { outcome: "cancelled", finalStatus: "cancelled" };
    });
    const events = await collect(job);
    expect(cancels).toBe(1);
    const gap = events.find((e) => e.type === "gap");
    expect(gap).toMatchObject({ gap: { kind: "cost-cap" } });
    expect(gap?.type === "gap" && gap.gap.detail).toMatch(
      /\$0\.00100 was crossed .*cancelled the job server-side/,
    );
    expect(events.slice(-2).map((e) => e.type)).toEqual(["status", "done"]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
    const result = await job.result();
    expect(result.status).toBe("incomplete");
    const full = textOf(
      await collect(new ResearchJob({ ...init(), session: fakeSession({ events: words }) })),
    );
    expect(result.report.length).toBeGreaterThan(0);
    expect(result.report.length).toBeLessThan(full.length);
    expect(full.startsWith(result.report)).toBe(true);
    // The final cost is reported, at or above the cap, and says it is an estimate.
    expect(result.usage.costUSD).toBeGreaterThanOrEqual(0.001);
    expect(result.usage.costSource).toBe("estimate");
    expect(result.gaps).toHaveLength(1);
  });

  it("a provider charge in a usage event counts as spend; the cancel's own charge is the final cost", async () => {
    const events = [{ kind: "created" as const }, { kind: "usage" as const }, ...words.slice(1)];
    let cancels = 0;
    // fake usage: 1,000 input + 100 output tokens + 3 searches = $0.0388 estimated.
    const job = capped(fakeSession({ events }), 0.01, async () => {
      cancels++;
      return {
        outcome: "cancelled",
        finalStatus: "cancelled",
        usage: { ...emptyUsage, costUSD: 0.05, costSource: "provider" },
      };
    });
    const result = await job.result();
    expect(cancels).toBe(1);
    expect(result.status).toBe("incomplete");
    expect(result.report).toBe("");
    expect(result.usage).toMatchObject({ costUSD: 0.05, costSource: "provider", inputTokens: 1000 });
  });

  it("a completion that wins the cancel race is read to its end: completed, whole, and a cost-cap gap says it went past the cap", async () => {
    let cancels = 0;
    const warnings: string[] = [];
    const job = new ResearchJob({
      ...init(async () => {
        cancels++;
        return { outcome: "already-terminal", finalStatus: "completed" };
      }),
      logger: { ...silent, warn: (message: string) => warnings.push(message) },
      session: fakeSession({ events: words }),
      maxCostUSD: 0.001,
    });
    const events = await collect(job);
    expect(cancels).toBe(1);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    // Never silent: the job ended above its cap; the result, the stream and the log say so.
    expect(events.filter((e) => e.type === "gap")).toEqual([
      expect.objectContaining({
        gap: { kind: "cost-cap", detail: expect.stringMatching(/completed above its cap/) },
      }),
    ]);
    expect(events.at(-2)?.type).toBe("gap");
    expect((await job.result()).gaps).toHaveLength(1);
    expect(warnings).toEqual([expect.stringMatching(/ended above the cap/)]);
  });

  it("a cancel that fails still stops the stream, and the gap says the job may still be billing", async () => {
    const job = capped(fakeSession({ events: words }), 0.001, async () => {
      throw new Error("connect ECONNREFUSED with Bearer sk-secret-0123456789");
    });
    const result = await job.result();
    expect(result.status).toBe("incomplete");
    expect(result.gaps[0]!.detail).toMatch(/cancel failed .*may still be running, and billing/);
    expect(result.gaps[0]!.detail).not.toContain("sk-secret-0123456789");
  });

  it("below the cap nothing changes", async () => {
    let cancels = 0;
    const job = capped(fakeSession({ events: words }), 5, async () => {
      cancels++;
      return { outcome: "cancelled" };
    });
    const result = await job.result();
    expect(cancels).toBe(0);
    expect(result.status).toBe("completed");
    expect(result.gaps).toEqual([]);
  });

  // As a Gemini stream does: searches start before the engine's first usage snapshot counts them.
  it("crossing on streamed searches: the gap says so, and the last usage counts the searches it priced", () => {
    const meter = new SpendMeter(0.015, pricing); // $10 per 1,000 searches: two are $0.02
    for (const query of ["a", "b"])
      meter.observe({ type: "search", action: "search", query, state: "started", seq: 0 });
    const crossing = meter.crossing();
    expect(crossing).toMatchObject({ costUSD: 0.02, source: "streamed-estimate" });
    expect(capGap(crossing!, { outcome: "cancelled" }).detail).toMatch(
      /estimated from catalog prices and the text and searches streamed so far/,
    );
    expect(meter.finalUsage(undefined)).toMatchObject({ searches: 2, costUSD: 0.02, costSource: "estimate" });
  });
});

describe("spend cap before the start", () => {
  const client = new Sonde({
    openai: { apiKey: "sk-test-spend-0123" },
    gemini: { apiKey: "AIza-test-spend-0123" },
    perplexity: { apiKey: "pplx-test-spend-0123" },
    openrouter: { apiKey: "sk-or-test-spend" },
    hosted: { apiKey: "hosted-test-spend", baseURL: "http://127.0.0.1:9" },
    env: {},
  });

  it("every engine accepts budget.maxCostUSD; the rest of budget stays the portable engine's", () => {
    for (const model of [
      "openai:gpt-5.5-pro",
      "gemini:deep-research-preview-04-2026",
      "openrouter:perplexity/sonar-deep-research",
      "perplexity:medium",
      "hosted:agents.deep_research",
      "portable:demo/offline",
    ])
      expect(client.research.validate({ model, query: "q", budget: { maxCostUSD: 2 } }).budget).toEqual({
        maxCostUSD: 2,
      });
    expect(() =>
      client.research.validate({
        model: "openai:gpt-5.5-pro",
        query: "q",
        budget: { maxCostUSD: 2, searches: 3 },
      }),
    ).toThrow(UnsupportedOptionError);
    expect(() =>
      client.research.validate({ model: "openai:gpt-5.5-pro", query: "q", budget: { maxCostUSD: -1 } }),
    ).toThrow(/budget\.maxCostUSD/);
  });

  it("validate() says when the cap can only be checked at the end, and what it cannot stop", () => {
    const pollOnly = client.research.validate({
      model: "openai:gpt-5.5-pro",
      query: "q",
      budget: { maxCostUSD: 2 },
    });
    expect(pollOnly.adjustments).toEqual([
      expect.objectContaining({
        option: "budget",
        applied: 2,
        reason: expect.stringMatching(/no running cost before the job ends/),
      }),
    ]);
    const openrouter = client.research.validate({
      model: "openrouter:perplexity/sonar-deep-research",
      query: "q",
      budget: { maxCostUSD: 2 },
    });
    expect(openrouter.adjustments.map((a) => a.reason)).toEqual([
      expect.stringMatching(/billing may continue/),
    ]);
    const streaming = client.research.validate({
      model: "gemini:deep-research-preview-04-2026",
      query: "q",
      budget: { maxCostUSD: 2 },
    });
    expect(streaming.adjustments).toEqual([]);
  });

  // An Ollama or vLLM endpoint reports no charge, and the catalog has no price for portable:*.
  it("validate() says a portable model the catalog cannot price is capped only by charges its endpoint reports", () => {
    const local = new Sonde({
      env: {},
      portable: {
        chat: { local: { baseURL: "http://127.0.0.1:9/v1" } },
        search: { provider: "searxng", baseURL: "http://127.0.0.1:9" },
      },
    });
    const request = { model: "portable:local/qwen3:32b", query: "q", budget: { maxCostUSD: 2 } };
    expect(local.research.validate(request).adjustments).toEqual([
      expect.objectContaining({
        option: "budget",
        applied: 2,
        reason: expect.stringMatching(
          /no catalog price for portable:local\/qwen3:32b: the cap sees only charges its endpoint reports/,
        ),
      }),
    ]);
    expect(local.research.estimate(request).notes[0]).toMatch(/the cap sees only charges/);
    // The offline demo is priced (at zero): nothing to say.
    expect(local.research.validate({ ...request, model: "portable:demo/offline" }).adjustments).toEqual([]);
  });

  it("estimate() returns the catalog's prices, a typical range or unknown, and the hosted hold", () => {
    const gemini = client.research.estimate({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    expect(gemini).toMatchObject({
      provider: "gemini",
      prices: { inputPerM: 2, outputPerM: 12, perThousandSearches: 14 },
      typical: { lowUSD: 1, highUSD: 3, confirmed: false },
    });
    expect(client.research.estimate({ model: "openai:gpt-5.5-pro", query: "q" }).typical).toBe("unknown");
    expect(client.research.estimate({ model: "perplexity:medium", query: "q" }).typical).toMatchObject({
      lowUSD: 0.016,
      highUSD: 0.05,
      confirmed: false,
    });
    const hosted = client.research.estimate({
      model: "hosted:agents.deep_research",
      query: "q",
      budget: { maxCostUSD: 5 },
    });
    expect(hosted).toMatchObject({ holdUSD: 6, maxCostUSD: 5, capChecked: "at-end", typical: "unknown" });
    expect(hosted.notes.join(" ")).toMatch(/holds about \$6\.00 .* above the cap/);
  });
});

describe("spend cap on attach, and a broken integration", () => {
  afterEach(() => clearMocks());

  it("attach(ref, { maxCostUSD }) caps the re-attached job; a bad cap is refused before anything runs", async () => {
    // 4,000 characters of report at $12 per M output tokens: ~$0.012 for the whole job, which
    // the mock "provider" runs at 10 ms an event, so it is still running when the cap is crossed.
    mockResearch("word ".repeat(800), { delayMs: 10 }).always().register();
    const client = new Sonde({ env: {} });
    const first = client.research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    for await (const event of first) if (event.type === "text") break;
    const ref = first.toRef();
    expect(() => client.research.attach(ref, { maxCostUSD: -1 })).toThrow(InvalidRequestError);
    const attached = client.research.attach(ref, { maxCostUSD: 0.002 });
    const result = await attached.result();
    expect(result.status).toBe("incomplete");
    expect(result.gaps.map((gap) => gap.kind)).toEqual(["cost-cap"]);
    expect(result.usage.costUSD).toBeGreaterThanOrEqual(0.002);
    expect(result.report.length).toBeLessThan(4000);
  });

  it("an observer that throws, or a telemetry that cannot observe, changes nothing the job delivers", async () => {
    mockResearch("steady report").always().register();
    const warnings: string[] = [];
    const throwing = new Sonde({
      env: {},
      telemetry: {
        observeJob: () => () => {
          throw new Error("exporter down");
        },
      },
    });
    const failing = new Sonde({
      env: {},
      logger: { warn: (message) => warnings.push(message) },
      telemetry: {
        observeJob: () => {
          throw new Error("no tracer");
        },
      },
    });
    for (const client of [throwing, failing]) {
      const result = await client.research
        .start({ model: "gemini:deep-research-preview-04-2026", query: "q" })
        .result();
      expect(result).toMatchObject({ status: "completed", report: "steady report" });
    }
    expect(warnings).toEqual(["telemetry failed to observe a job; it runs unobserved"]);
  });
});
