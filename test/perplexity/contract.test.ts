/**
 * Perplexity async contract: transcripts from test/fixtures/perplexity/ replayed in
 * strict order over msw, driven through the public client.
 */
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { handlers } from "../../providers/perplexity/testing.js";
import {
  IdempotencyConflictError,
  InvalidRequestError,
  type JobRef,
  ProviderJobError,
  type ResearchEvent,
  Sonde,
} from "../../src/index.js";
import { collect, fastRetry, replay, transcript } from "./helpers.js";

const KEY = "pplx-test-0123456789abcdef";
const BASE = "https://perplexity.test";
const model = "perplexity:sonar-deep-research";
const query = "What changed in EU battery regulation in 2025?";

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const client = (extra: { asyncPath?: string } = {}) =>
  new Sonde({
    perplexity: { apiKey: KEY, baseURL: BASE, ...extra },
    retry: fastRetry,
    idleTimeoutMs: 2_000,
    env: {},
  });

const report = "## Summary\nDue-diligence duties were postponed to 2027 [1][2].";

describe("perplexity async: submit, poll, report", () => {
  it("wraps the request with its idempotency key, polls with status heartbeats, then delivers the report as one text event, citations and Perplexity's charge", async () => {
    const { exchanges } = transcript("perplexity", "async-completed.json");
    const seen = replay(server, BASE, exchanges);
    const job = client().research.start({ model, query, idempotencyKey: "job-7f1c2a" });
    const events = await collect(job);

    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(
      exchanges.map((e) => `${e.request.method} ${e.request.path}`),
    );
    expect(seen[0]!.body).toEqual(exchanges[0]!.request.body);
    expect(seen[0]!.headers.get("authorization")).toBe(`Bearer ${KEY}`);
    expect(events.map((e) => e.type)).toEqual([
      "created",
      "status",
      "status",
      "thinking",
      "text",
      "citation",
      "citation",
      "usage",
      "status",
      "done",
    ]);
    expect(events[0]).toMatchObject({
      jobId: "3f0c1d5e-8a44-4c1e-9d0b-2b6f0c4e9a11",
      provider: "perplexity",
      model,
    });
    expect(events.slice(1, 3).map((e) => e.type === "status" && e.status)).toEqual(["queued", "running"]);
    expect(events[3]).toMatchObject({
      type: "thinking",
      delta: "I need the 2025 obligations and any postponements.",
    });
    expect(events.filter((e) => e.type === "text")).toEqual([expect.objectContaining({ delta: report })]);

    const result = await job.result();
    expect(result.report).toBe(report);
    expect(result.citations).toEqual([
      {
        url: "https://example.org/eu-battery-regulation-timeline",
        title: "EU battery regulation timeline",
        snippet: "The Commission proposed to postpone ...",
        startIndex: report.indexOf("[1]"),
        endIndex: report.indexOf("[1]") + 3,
      },
      {
        url: "https://example.com/battery-news",
        title: "Battery news",
        snippet: "...",
        startIndex: report.indexOf("[2]"),
        endIndex: report.indexOf("[2]") + 3,
      },
    ]);
    expect(result.usage).toMatchObject({
      inputTokens: 21 + 48210,
      outputTokens: 3120,
      internalReasoningTokens: 61200,
      searches: 24,
      costUSD: 0.425,
      costSource: "provider",
    });
    const ref = job.toRef();
    expect(ref.resume).toEqual({ idempotencyKey: "job-7f1c2a" });
    expect(JSON.stringify(ref)).not.toContain(KEY);
    // Every event but `done` carries the job snapshot it came from.
    const bodies = exchanges.map((e) => e.response.body);
    for (const event of events.slice(0, -1)) expect(bodies).toContainEqual(event.rawEvent);
  });

  it("generates a fresh idempotency key per start() and keeps it in the ref", async () => {
    server.use(...handlers({ baseURL: BASE }));
    const keys: unknown[] = [];
    server.events.on("request:start", async ({ request }) => {
      if (request.method === "POST")
        keys.push(((await request.clone().json()) as { idempotency_key: string }).idempotency_key);
    });
    const sonde = client();
    const first = sonde.research.start({ model, query });
    const second = sonde.research.start({ model, query });
    await Promise.all([first.result(), second.result()]);
    server.events.removeAllListeners();
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^sonde-[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect([first.toRef().resume.idempotencyKey, second.toRef().resume.idempotencyKey].sort()).toEqual(
      [...keys].sort(),
    );
    expect(first.id).not.toBe(second.id);
  });

  it("uses the configured submit path, maps reasoning steps to searches, places markers after astral characters in UTF-16, and ends a cut-off report as incomplete with a gap", async () => {
    const { exchanges } = transcript("perplexity", "v1-sonar-reasoning-steps-length.json");
    const seen = replay(server, BASE, exchanges);
    const job = client({ asyncPath: "/v1/async/sonar" }).research.start({
      model,
      query: "Sodium-ion energy density in 2025?",
    });
    const events = await collect(job);
    expect(seen.map((s) => s.path)).toEqual(exchanges.map((e) => e.request.path));
    expect(events.filter((e) => e.type === "search")).toEqual([
      expect.objectContaining({
        action: "search",
        query: "sodium-ion energy density 2025",
        state: "completed",
      }),
      expect.objectContaining({ action: "search", query: "CATL Naxtra Wh/kg", state: "completed" }),
      expect.objectContaining({ action: "open_page", url: "https://example.net/naxtra", state: "completed" }),
    ]);
    const result = await job.result();
    const text = "Sodium-ion packs reached 160 Wh/kg 🔋 in 2025 [1], while";
    expect(result.report).toBe(text);
    expect(result.status).toBe("incomplete");
    expect(result.gaps).toEqual([expect.objectContaining({ kind: "budget-exhausted" })]);
    expect(result.citations).toEqual([
      {
        url: "https://example.net/naxtra?utm_source=perplexity",
        title: "Naxtra launch",
        snippet: "175 Wh/kg",
        startIndex: text.indexOf("[1]"),
        endIndex: text.indexOf("[1]") + 3,
      },
      { url: "https://example.org/sodium-ion", title: "Sodium-ion overview", snippet: "An overview." },
    ]);
    expect(text.slice(result.citations[0]!.startIndex, result.citations[0]!.endIndex)).toBe("[1]");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  });

  it("a report cut off (finish_reason length) inside its <think> block puts no reasoning into the report", async () => {
    const { exchanges } = transcript("perplexity", "async-completed.json");
    const completed = structuredClone(exchanges[2]!) as {
      response: {
        body: { response: { choices: { finish_reason: string; message: { content: string } }[] } };
      };
    };
    const choice = completed.response.body.response.choices[0]!;
    choice.finish_reason = "length";
    choice.message.content = "<think>\nI need the 2025 obligations and any postpone";
    replay(server, BASE, [exchanges[0]!, exchanges[1]!, completed as never]);
    const job = client().research.start({ model, query, reasoning: { includeThinking: false } });
    const events = await collect(job);
    expect(events.some((e) => e.type === "text" || e.type === "thinking")).toBe(false);
    const result = await job.result();
    expect(result.report).toBe("");
    expect(result.status).toBe("incomplete");
    expect(result.gaps).toEqual([expect.objectContaining({ kind: "budget-exhausted" })]);

    server.resetHandlers();
    replay(server, BASE, [exchanges[0]!, exchanges[1]!, completed as never]);
    const withThinking = await collect(client().research.start({ model, query }));
    expect(withThinking.filter((e) => e.type === "thinking")).toEqual([
      expect.objectContaining({ delta: "I need the 2025 obligations and any postpone" }),
    ]);
  });

  it("a FAILED job becomes an error event and a failed job with the provider's reason", async () => {
    replay(server, BASE, transcript("perplexity", "async-failed.json").exchanges);
    const job = client().research.start({ model, query });
    const events = await collect(job);
    expect(events.slice(-3)).toMatchObject([
      { type: "error", error: { code: "job_failed", retryable: false } },
      { type: "status", status: "failed" },
      { type: "done", status: "failed" },
    ]);
    const error = await job.result().catch((e: unknown) => e);
    expect(ProviderJobError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("Internal error while processing request");
  });

  it("a 422 is an InvalidRequestError naming the field, and the submit is not repeated", async () => {
    const seen = replay(server, BASE, transcript("perplexity", "validation-error.json").exchanges);
    const error = await client()
      .research.start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/body\.request\.model: Input should be/);
    expect(seen).toHaveLength(1);
  });

  it("a 409 on submit is an IdempotencyConflictError that says what to do", async () => {
    server.use(
      http.post(`${BASE}/async/chat/completions`, () =>
        HttpResponse.json(
          { error: { message: "Idempotency key reused", type: "conflict" } },
          { status: 409 },
        ),
      ),
    );
    const error = await client()
      .research.start({ model, query, idempotencyKey: "k-1" })
      .result()
      .catch((e: unknown) => e);
    expect(IdempotencyConflictError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/use a new idempotencyKey/);
  });

  it("reasoning.includeThinking: false leaves the <think> block out of the stream; reasoning.summary is rejected", async () => {
    replay(server, BASE, transcript("perplexity", "async-completed.json").exchanges);
    const events = await collect(
      client().research.start({ model, query, reasoning: { includeThinking: false } }),
    );
    expect(events.some((e) => e.type === "thinking")).toBe(false);
    expect(events.find((e) => e.type === "text")).toMatchObject({ delta: report });
    expect(() => client().research.start({ model, query, reasoning: { summary: "auto" } })).toThrow(
      /no reasoning summaries/,
    );
  });
});

describe("perplexity async: refs, attach, get, cancel", () => {
  it("attach(ref) resumes polling and result() is whole", async () => {
    server.use(
      ...handlers({ baseURL: BASE, report: "Findings [1].", citations: [{ url: "https://example.org/a" }] }),
    );
    const sonde = client();
    const first = sonde.research.start({ model, query });
    let ref: JobRef | undefined;
    for await (const event of first) {
      if (event.type === "created") {
        ref = JSON.parse(JSON.stringify(first.toRef()));
        break;
      }
    }
    const attached = sonde.research.attach(ref!);
    const events = await collect(attached);
    expect(events.some((e) => e.type === "created")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const result = await attached.result();
    expect(result.report).toBe("Findings [1].");
    expect(result.citations).toEqual([
      { url: "https://example.org/a", title: "https://example.org/a", startIndex: 9, endIndex: 12 },
    ]);
  });

  it("a ref taken inside the final batch resumes exactly after the last delivered event", async () => {
    const { exchanges } = transcript("perplexity", "async-completed.json");
    const uninterrupted = await (async () => {
      replay(server, BASE, exchanges);
      return collect(client().research.start({ model, query }));
    })();
    server.resetHandlers();
    const strip = (e: ResearchEvent) => ({ ...e, seq: 0 });
    const finalBatch = uninterrupted.filter((e) => e.cursor === "final");
    expect(finalBatch.length).toBeGreaterThan(3);
    for (const stopAfter of ["thinking", "text", "citation", "usage"] as const) {
      replay(server, BASE, exchanges);
      const sonde = client();
      const job = sonde.research.start({ model, query });
      const before: ResearchEvent[] = [];
      let ref: JobRef | undefined;
      for await (const event of job) {
        before.push(event);
        if (event.type === stopAfter) {
          ref = JSON.parse(JSON.stringify(job.toRef()));
          break;
        }
      }
      expect(ref).toMatchObject({ cursor: "final" });
      server.resetHandlers();
      // The job finished meanwhile: every poll answers COMPLETED.
      replay(server, BASE, [exchanges[2]!]);
      const attached = sonde.research.attach(ref!);
      const after = await collect(attached);
      const delivered = [...before.filter((e) => e.cursor === "final"), ...after.slice(0, -1)];
      expect(delivered.map(strip)).toEqual(finalBatch.map(strip));
      expect((await attached.result()).report).toBe(report);
      expect((await attached.result()).citations).toHaveLength(2);
      server.resetHandlers();
    }
  });

  it("a job started with reasoning.includeThinking: false keeps it across attach: no thinking appears and no event is delivered twice", async () => {
    const { exchanges } = transcript("perplexity", "async-completed.json");
    const request = { model, query, reasoning: { includeThinking: false } };
    replay(server, BASE, exchanges);
    const uninterrupted = await collect(client().research.start(request));
    server.resetHandlers();
    const strip = (e: ResearchEvent) => ({ ...e, seq: 0 });
    const finalBatch = uninterrupted.filter((e) => e.cursor === "final");
    expect(finalBatch.some((e) => e.type === "thinking")).toBe(false);

    replay(server, BASE, exchanges);
    const sonde = client();
    const job = sonde.research.start(request);
    const before: ResearchEvent[] = [];
    let ref: JobRef | undefined;
    for await (const event of job) {
      before.push(event);
      if (event.type === "citation") {
        ref = JSON.parse(JSON.stringify(job.toRef()));
        break;
      }
    }
    server.resetHandlers();
    replay(server, BASE, [exchanges[2]!]);
    const attached = sonde.research.attach(ref!);
    const after = await collect(attached);
    expect(after.some((e) => e.type === "thinking")).toBe(false);
    const delivered = [...before.filter((e) => e.cursor === "final"), ...after.slice(0, -1)];
    expect(delivered.map(strip)).toEqual(finalBatch.map(strip));
  });

  it("get(ref) is one poll: running while in progress, then the report, citations and charge", async () => {
    const { exchanges } = transcript("perplexity", "async-completed.json");
    const jobId = "3f0c1d5e-8a44-4c1e-9d0b-2b6f0c4e9a11";
    const ref: JobRef = {
      v: 1,
      provider: "perplexity",
      model,
      jobId,
      createdAt: "2026-01-01T00:00:00.000Z",
      resume: { idempotencyKey: "job-7f1c2a" },
    };
    let seen = replay(server, BASE, [exchanges[1]!]);
    expect(await client().research.get(ref)).toMatchObject({ status: "running", jobId });
    expect(seen).toHaveLength(1);
    server.resetHandlers();
    seen = replay(server, BASE, [exchanges[2]!]);
    const snapshot = await client().research.get(ref);
    expect(seen).toHaveLength(1);
    expect(snapshot).toMatchObject({
      status: "completed",
      report,
      usage: { costUSD: 0.425, costSource: "provider", searches: 24 },
    });
    expect(snapshot.citations).toHaveLength(2);
  });

  it("cancel() is transport-only and says the job keeps running and billing", async () => {
    server.use(...handlers({ baseURL: BASE }));
    const sonde = client();
    const job = sonde.research.start({ model, query });
    const events: ResearchEvent[] = [];
    for await (const event of job) {
      events.push(event);
      if (event.type === "created") {
        const outcome = await job.cancel();
        expect(outcome).toMatchObject({ outcome: "transport-only" });
        expect(outcome.detail).toMatch(/no cancel endpoint.*keeps running and is billed/);
      }
    }
    expect(events.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
  });

  it("the msw handlers return the same job for the same idempotency key", async () => {
    server.use(...handlers({ baseURL: BASE, report: "Same job." }));
    const sonde = client();
    const a = await sonde.research.start({ model, query, idempotencyKey: "same-key" }).result();
    const b = await sonde.research.start({ model, query, idempotencyKey: "same-key" }).result();
    expect(a.jobId).toBe(b.jobId);
    expect(a.report).toBe("Same job.");
  });
});
