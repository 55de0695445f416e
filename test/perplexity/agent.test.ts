/**
 * Perplexity deep research on the Agent API: the spec's sample transcript, its drop and
 * resume, a refused resume that falls back to polling, the background snapshot sequence
 * (poll-only use), the request body and its settings, error bodies, failures that come
 * back as HTTP 200, cancel outcomes and the cost of completed and cancelled runs.
 * Fixtures in test/fixtures/perplexity/, replayed in strict order over msw.
 */
import { describe, expect, it } from "vitest";
import {
  AuthenticationError,
  IndeterminateSubmissionError,
  InvalidRequestError,
  JobNotFoundError,
  type JobRef,
  ProviderJobError,
  type ResearchEvent,
  Sonde,
  UnsupportedOptionError,
} from "../../src/index.js";
import { framing, sseText } from "../helpers/sse.js";
import { createTestServer } from "../helpers/test-server.js";
import { collect, type Exchange, fastRetry, fixtureText, replay, sseEvents, transcript } from "./helpers.js";

const KEY = "pplx-test-0123456789abcdef";
const BASE = "https://perplexity.test";
const model = "perplexity:medium";
const query = "Vector DB pricing?";

const server = createTestServer();

const client = (settings: Record<string, unknown> = {}) =>
  new Sonde({
    perplexity: { apiKey: KEY, baseURL: BASE, cancelWaitMs: 2_000, ...settings },
    retry: fastRetry,
    idleTimeoutMs: 2_000,
    env: {},
  });

const sample = fixtureText("perplexity", "agent-sample.sse");
const sampleEvents = sseEvents(sample);
const RID = "resp_d60f3e03-57e0-4048-994f-69b29a6d2ce7";
const REPORT = "Builder is $20/month flat [web:11].";
const PINECONE = "https://www.pinecone.io/pricing/";
const errors = JSON.parse(fixtureText("perplexity", "agent-errors.json")) as Record<
  string,
  { status: number; body: unknown; event?: Record<string, unknown> }
>;
const cancelled = (
  JSON.parse(fixtureText("perplexity", "agent-cancelled.json")) as { body: Record<string, unknown> }
).body;
const background = transcript("perplexity", "agent-background.json").exchanges;
const completedSnapshot = background[2]!.response.body;

/** SSE bytes of a list of events, framed as Perplexity frames them. */
const sse = (events: Record<string, unknown>[]) => sseText(events, framing.perplexity);
const post = (response: Exchange["response"]): Exchange => ({
  request: { method: "POST", path: "/v1/agent" },
  response,
});
const get = (path: string, response: Exchange["response"]): Exchange => ({
  request: { method: "GET", path },
  response,
});
const json = (status: number, body: unknown): Exchange["response"] => ({ status, body });

const ofType = <T extends ResearchEvent["type"]>(events: ResearchEvent[], type: T) =>
  events.filter((e): e is Extract<ResearchEvent, { type: T }> => e.type === type);

describe("perplexity agent: the sample transcript (providers/perplexity/WIRE.md §4)", () => {
  it("with reasoning.includeThinking false, no thought reaches an event, its rawEvent included", async () => {
    replay(server, BASE, [post({ status: 200, sse: sample })]);
    const job = client().research.start({ model, query, reasoning: { includeThinking: false } });
    const events = await collect(job);
    expect(ofType(events, "thinking")).toHaveLength(0);
    const raw = JSON.stringify(events.map((e) => e.rawEvent));
    expect(raw).not.toContain("Planning. ");
    expect(raw).not.toContain("Searching. ");
    // The rest of those payloads is still there (the search the thought came with).
    expect(raw).toContain("Pinecone pricing official");
    expect((await job.result()).report).toBe(REPORT);
  });

  it("maps a background stream to thinking, searches, text, [web:N] citations in UTF-16 and Perplexity's charge", async () => {
    const seen = replay(server, BASE, [post({ status: 200, sse: sample })]);
    const job = client().research.start({ model, query });
    const events = await collect(job);

    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers.get("authorization")).toBe(`Bearer ${KEY}`);
    expect(seen[0]!.body).toEqual({
      preset: "medium",
      input: query,
      background: true,
      store: true,
      stream: true,
    });
    expect(events.map((e) => e.type)).toEqual([
      "created",
      "status",
      "phase",
      "thinking",
      "thinking",
      "phase",
      "search",
      "search",
      "usage",
      "phase",
      "text",
      "text",
      "citation",
      // The final body lists a search and a page read the stream never showed: once, at the end.
      "search",
      "search",
      "usage",
      "status",
      "done",
    ]);
    expect(events[0]).toMatchObject({ jobId: RID, provider: "perplexity", model });
    expect(ofType(events, "thinking").map((e) => e.delta)).toEqual(["Planning. ", "Searching. "]);
    // The live search is not repeated from the body's search_results item.
    expect(ofType(events, "search").map((e) => [e.state, e.query ?? e.url])).toEqual([
      ["started", "Pinecone pricing official"],
      ["completed", "Pinecone pricing official"],
      ["completed", "Weaviate Cloud pricing official"],
      ["completed", "https://qdrant.tech/pricing/"],
    ]);
    const result = await job.result();
    expect(result.report).toBe(REPORT);
    expect(result.citations).toEqual([
      expect.objectContaining({ url: PINECONE, title: "Pricing", startIndex: 26, endIndex: 34 }),
    ]);
    expect(REPORT.slice(26, 34)).toBe("[web:11]");
    expect(result.usage).toMatchObject({
      inputTokens: 24463,
      outputTokens: 1085 - 487,
      reasoningTokens: 487,
      searches: 3,
      fetches: 3,
      costUSD: 0.01599,
      costSource: "provider",
    });
    expect(job.toRef()).toMatchObject({ provider: "perplexity", model, jobId: RID, cursor: "9" });
    expect(JSON.stringify(job.toRef())).not.toContain(KEY);
  });

  it("accepts named events and a trailing [DONE], as the SDKs parse them", async () => {
    const named = sseText(sampleEvents, { ...framing.openai, done: true });
    replay(server, BASE, [post({ status: 200, sse: named })]);
    const result = await client().research.start({ model, query }).result();
    expect(result.report).toBe(REPORT);
    expect(result.citations).toHaveLength(1);
  });

  it("resumes the dropped stream with starting_after=6, as the sample does, to the same result", async () => {
    const seen = replay(server, BASE, [
      post({ status: 200, sse: sse(sampleEvents.slice(0, 7)) }),
      get(`/v1/agent/${RID}?stream=true&starting_after=6`, { status: 200, sse: sse(sampleEvents.slice(7)) }),
    ]);
    const job = client().research.start({ model, query });
    const events = await collect(job);
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      "POST /v1/agent",
      `GET /v1/agent/${RID}?stream=true&starting_after=6`,
    ]);
    expect(ofType(events, "text").map((e) => e.delta)).toEqual(["Builder is $20/month flat ", "[web:11]."]);
    const result = await job.result();
    expect(result.report).toBe(REPORT);
    expect(result.citations).toEqual([
      expect.objectContaining({ url: PINECONE, startIndex: 26, endIndex: 34 }),
    ]);
    expect(result.usage.costUSD).toBe(0.01599);
  });

  it("a resume refused with 400 (the reconnect window passed) falls back to polling GET /v1/agent/{id}", async () => {
    const expired = errors.resumeExpired400!;
    const seen = replay(server, BASE, [
      post({ status: 200, sse: sse(sampleEvents.slice(0, 6)) }),
      get(`/v1/agent/${RID}?stream=true&starting_after=5`, json(expired.status, expired.body)),
      get(`/v1/agent/${RID}`, json(200, completedSnapshot)),
    ]);
    const job = client().research.start({ model, query });
    const events = await collect(job);
    expect(seen).toHaveLength(3);
    expect(seen.filter((s) => s.method === "POST")).toHaveLength(1);
    const result = await job.result();
    expect(result.status).toBe("completed");
    // The stream gave the first delta; the snapshot the rest, once.
    expect(ofType(events, "text").map((e) => e.delta)).toEqual(["Builder is $20/month flat ", "[web:11]."]);
    expect(result.report).toBe(REPORT);
    expect(result.citations).toEqual([
      expect.objectContaining({ url: PINECONE, startIndex: 26, endIndex: 34 }),
    ]);
    expect(result.usage).toMatchObject({ costUSD: 0.01599, costSource: "provider" });
  });
});

describe("perplexity agent: background snapshots and poll-only use (providers/perplexity/WIRE.md §5)", () => {
  it("stream: false submits, polls queued → in_progress → completed, and reads report, sources and cost from the snapshot", async () => {
    const seen = replay(server, BASE, background);
    const job = client({ stream: false }).research.start({ model, query });
    const events = await collect(job);
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(
      background.map((e) => `${e.request.method} ${e.request.path}`),
    );
    expect(seen[0]!.body).toEqual(background[0]!.request.body);
    expect(ofType(events, "status").map((e) => e.status)).toEqual(["queued", "running", "completed"]);
    const result = await job.result();
    expect(result.report).toBe(REPORT);
    expect(result.citations).toEqual([
      expect.objectContaining({ url: PINECONE, title: "Pricing", startIndex: 26, endIndex: 34 }),
    ]);
    expect(result.usage).toMatchObject({ searches: 3, fetches: 3, costUSD: 0.01599, costSource: "provider" });
    expect(job.toRef().resume).toMatchObject({ pollOnly: true });
  });

  it("get(ref) is one GET with status, report, citations and usage", async () => {
    const seen = replay(server, BASE, [get(`/v1/agent/${RID}`, json(200, completedSnapshot))]);
    const ref: JobRef = {
      v: 1,
      provider: "perplexity",
      model,
      jobId: RID,
      createdAt: "2026-10-09T00:00:00.000Z",
      resume: {},
    };
    const snapshot = await client().research.get(ref);
    expect(seen).toHaveLength(1);
    expect(snapshot).toMatchObject({
      status: "completed",
      report: REPORT,
      citations: [expect.objectContaining({ url: PINECONE, startIndex: 26 })],
      usage: { costUSD: 0.01599, costSource: "provider" },
    });
  });
});

describe("perplexity agent: the request", () => {
  it("names the preset in the configured field (effort), on the configured path, and sends an alias as is", async () => {
    const seen = replay(server, BASE, [
      { request: { method: "POST", path: "/v1/responses" }, response: { status: 200, sse: sample } },
    ]);
    await client({ presetField: "effort", agentPath: "/v1/responses/" })
      .research.start({ model: "perplexity:deep-research", query })
      .result();
    expect(seen[0]!.body).toEqual({
      effort: "deep-research",
      input: query,
      background: true,
      store: true,
      stream: true,
    });
  });

  it("sends instructions, asOf and output as a system message (top-level instructions would replace the preset's prompt)", async () => {
    const seen = replay(server, BASE, [post({ status: 200, sse: sample })]);
    await client()
      .research.start({
        model: "perplexity:high",
        query,
        instructions: "Be brief.",
        asOf: "2026-10-01",
        maxToolCalls: 12,
      })
      .result();
    const body = seen[0]!.body as Record<string, unknown>;
    expect(body.preset).toBe("high");
    expect(body.instructions).toBeUndefined();
    expect(body.max_tool_calls).toBe(12);
    expect(body.input).toEqual([
      { type: "message", role: "system", content: expect.stringContaining("Be brief.") },
      { type: "message", role: "user", content: query },
    ]);
    expect((body.input as { content: string }[])[0]!.content).toContain("2026-10-01");
  });

  it("rejects what it cannot send before any request", () => {
    const seen = replay(server, BASE, []);
    expect(() => client().research.start({ model, query, reasoning: { summary: "auto" } })).toThrow(
      UnsupportedOptionError,
    );
    expect(() => client({ presetField: "mode" }).research.start({ model, query })).toThrow(/presetField/);
    expect(seen).toHaveLength(0);
  });
});

describe("perplexity agent: error bodies (providers/perplexity/WIRE.md §8) and the single create (§9)", () => {
  it.each([
    ["unknownField400", InvalidRequestError, "invalid_request"],
    ["invalidKey401", AuthenticationError, "authentication"],
    ["validation422", InvalidRequestError, "invalid_request"],
  ] as const)("a create answered %s is a typed error, sent once", async (name, type, code) => {
    const fixture = errors[name]!;
    const seen = replay(server, BASE, [post(json(fixture.status, fixture.body))]);
    const error = await client()
      .research.start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(type.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code, status: fixture.status, provider: "perplexity" });
    expect(seen).toHaveLength(1);
    expect((error as Error).message).not.toContain(KEY);
    if (name === "validation422") expect((error as Error).message).toContain("body.input: Field required");
  });

  it("a 5xx on the create may have stored the run: IndeterminateSubmissionError, never resent", async () => {
    const fixture = errors.internal500!;
    const seen = replay(server, BASE, [post(json(fixture.status, fixture.body))]);
    const error = await client()
      .research.start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 500, retryable: false });
    expect(seen).toHaveLength(1);
  });

  it("a 429 on the create was refused before storing: resent after the wait (WIRE.md §9), one run", async () => {
    const fixture = errors.rateLimit429!;
    const seen = replay(server, BASE, [
      post({ ...json(fixture.status, fixture.body), headers: { "retry-after": "0" } }),
      post({ status: 200, sse: sample }),
    ]);
    const result = await client().research.start({ model, query }).result();
    expect(result.report).toBe(REPORT);
    expect(seen).toHaveLength(2);
  });

  it("an unknown id on get is JobNotFoundError", async () => {
    const fixture = errors.notFound404!;
    replay(server, BASE, [get(`/v1/agent/${RID}`, json(fixture.status, fixture.body))]);
    const ref: JobRef = {
      v: 1,
      provider: "perplexity",
      model,
      jobId: RID,
      createdAt: "2026-10-09T00:00:00.000Z",
      resume: {},
    };
    await expect(client().research.get(ref)).rejects.toSatisfy((e: unknown) =>
      JobNotFoundError.isInstance(e),
    );
  });

  it("response.failed with a top-level error ends the job failed with Perplexity's code", async () => {
    const failed = errors.failedRun!.event!;
    replay(server, BASE, [post({ status: 200, sse: sse([...sampleEvents.slice(0, 4), failed]) })]);
    const job = client().research.start({ model, query });
    const events = await collect(job);
    expect(ofType(events, "error")[0]!.error).toMatchObject({ code: "upstream_structured_output_failed" });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });
    const error = await job.result().catch((e: unknown) => e);
    expect(ProviderJobError.isInstance(error)).toBe(true);
  });

  it("a failed run polled as HTTP 200 is a failure (the body status decides, not the HTTP status)", async () => {
    const failed = {
      ...(completedSnapshot as Record<string, unknown>),
      status: "failed",
      output: [],
      usage: null,
      error: { code: 500, message: "Internal error while running tools", type: "internal_error" },
    };
    replay(server, BASE, [
      post(json(200, background[0]!.response.body)),
      get(`/v1/agent/${RID}`, json(200, failed)),
    ]);
    const error = await client({ stream: false })
      .research.start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "job_failed", providerCode: "500" });
    expect((error as Error).message).toContain("Internal error while running tools");
  });
});

describe("perplexity agent: cancel (WIRE.md §10) and cost", () => {
  const CID = cancelled.id as string;
  const ref: JobRef = {
    v: 1,
    provider: "perplexity",
    model,
    jobId: CID,
    createdAt: "2026-10-09T00:00:00.000Z",
    resume: {},
  };
  const running = { ...cancelled, status: "in_progress", error: null, incomplete_details: null };
  // Two search_results items in the cancelled snapshot: 2 × $0.0025, no tokens known.
  const estimate = 0.005;

  it("acknowledged (cancelling), then polled to cancelled: cancelled, with a labelled estimate from what the run showed", async () => {
    const ack = errors.cancelAck!;
    const seen = replay(server, BASE, [
      { request: { method: "POST", path: `/v1/agent/${CID}/cancel` }, response: json(ack.status, ack.body) },
      get(`/v1/agent/${CID}`, json(200, running)),
      get(`/v1/agent/${CID}`, json(200, cancelled)),
    ]);
    const outcome = await client().research.cancel(ref);
    expect(seen).toHaveLength(3);
    expect(outcome).toMatchObject({ outcome: "cancelled", finalStatus: "cancelled" });
    expect(outcome.usage).toMatchObject({ searches: 2, costUSD: estimate, costSource: "estimate" });
  });

  it("refused because the run had ended: already-terminal, with its final status", async () => {
    const refused = errors.cancelTerminal400!;
    replay(server, BASE, [
      {
        request: { method: "POST", path: `/v1/agent/${CID}/cancel` },
        response: json(refused.status, refused.body),
      },
      get(`/v1/agent/${CID}`, json(200, { ...(completedSnapshot as object), id: CID })),
    ]);
    expect(await client().research.cancel(ref)).toMatchObject({
      outcome: "already-terminal",
      finalStatus: "completed",
    });
  });

  it("acknowledged but still running when cancelWaitMs ends: pending, and says so", async () => {
    const ack = errors.cancelAck!;
    replay(server, BASE, [
      { request: { method: "POST", path: `/v1/agent/${CID}/cancel` }, response: json(ack.status, ack.body) },
      ...Array.from({ length: 200 }, () => get(`/v1/agent/${CID}`, json(200, running))),
    ]);
    const outcome = await client({ cancelWaitMs: 50 }).research.cancel(ref);
    expect(outcome.outcome).toBe("pending");
    expect(outcome.detail).toMatch(/still running/);
  });

  it("a run that ends cancelled in the stream (usage null) still shows an estimate of its searches and pages", async () => {
    const pages = {
      type: "response.reasoning.fetch_url_results",
      sequence_number: 4,
      contents: [{ url: "https://qdrant.tech/pricing/", title: "Pricing", snippet: "…" }],
    };
    const end = {
      type: "response.cancelled",
      sequence_number: 5,
      response: { ...cancelled, id: RID, output: [] },
    };
    replay(server, BASE, [post({ status: 200, sse: sse([...sampleEvents.slice(0, 4), pages, end]) })]);
    const job = client().research.start({ model, query });
    await collect(job);
    const result = await job.result();
    expect(result.status).toBe("cancelled");
    // One search ($0.0025) and one page ($0.0005) at the catalog's tool fees; tokens unknown.
    expect(result.usage).toMatchObject({ searches: 1, fetches: 1, costUSD: 0.003, costSource: "estimate" });
  });
});
