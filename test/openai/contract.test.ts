/**
 * Contract tests of the OpenAI engine over msw: recorded-format transcripts
 * (test/fixtures/openai) in, the events and results a user relies on out.
 */

import { describe, expect, it } from "vitest";
import {
  AuthenticationError,
  IndeterminateSubmissionError,
  InsufficientCreditError,
  InvalidRefError,
  InvalidRequestError,
  JobAbortedError,
  ProviderJobError,
  RateLimitError,
  UnsupportedOptionError,
} from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import type { JobRef } from "../../src/ref.js";
import { framing, sseData, sseText } from "../helpers/sse.js";
import { createTestServer, dropAfter, json, jsonFixture, type Reply, sse } from "../helpers/test-server.js";
import {
  BASE,
  codePointSlice,
  collect,
  expectSeqStrictlyIncreasing,
  fixture,
  fixtureJson,
  KEY,
  type Logged,
  makeClient,
  ofType,
  POLL_MODEL,
  STREAMING_MODEL,
  textOf,
} from "./helpers.js";

const server = createTestServer();
const seen = server.calls;

const RESPONSES = `POST ${BASE}/responses`;
const RESPONSE = `GET ${BASE}/responses/:id`;
const CANCEL = `POST ${BASE}/responses/:id/cancel`;

/** An SSE body in small chunks, so events and multi-byte characters straddle reads. */
const stream = (text: string) => sse(text, { chunkSize: 97 });
const httpError = (name: string, status: number, headers?: Record<string, string>) =>
  jsonFixture(`openai/${name}`, { status, ...(headers && { headers }) });

function streamFixture(name: string) {
  server.route({ [RESPONSES]: stream(fixture(name)) });
}

const posts = () => seen.filter((s) => s.method === "POST");
const reportOfExpected = (name: string) =>
  fixtureJson<{ report: string; annotations: { start_index: number; end_index: number; url: string }[] }>(
    name,
  );

describe("the create request", () => {
  it("starts a background, stored, streamed response with web search injected when no tool is named", async () => {
    streamFixture("research-web-search.sse");
    const client = makeClient({
      openai: { apiKey: KEY, baseURL: BASE, organization: "org-abc123", project: "proj_xyz789" },
    });
    await client.research
      .start({
        model: STREAMING_MODEL,
        query: "What changed in EU battery regulation in 2025?",
        instructions: "Cite primary sources.",
        asOf: "2025-12-31",
        output: "a one-page brief",
        maxToolCalls: 40,
        reasoning: { summary: "auto" },
      })
      .result();
    expect(posts()).toHaveLength(1);
    const [post] = posts();
    expect(post!.url.pathname).toBe("/v1/responses");
    expect(post!.headers.get("authorization")).toBe(`Bearer ${KEY}`);
    expect(post!.headers.get("openai-organization")).toBe("org-abc123");
    expect(post!.headers.get("openai-project")).toBe("proj_xyz789");
    expect(post!.json).toEqual({
      model: "o4-mini-deep-research",
      input: "What changed in EU battery regulation in 2025?",
      instructions: expect.stringMatching(
        /^Cite primary sources\.\n\n.*2025-12-31.*\n\n.*a one-page brief$/s,
      ),
      background: true,
      store: true,
      stream: true,
      tools: [{ type: "web_search_preview" }],
      max_tool_calls: 40,
      reasoning: { summary: "auto" },
    });
  });

  it("maps file_search, mcp (approvals off) and code_interpreter, and previousJobId for follow-up models", async () => {
    server.route({ [RESPONSES]: jsonFixture("openai/poll/pro.completed.json") });
    const client = makeClient();
    await client.research
      .start({
        model: POLL_MODEL,
        query: "q",
        previousJobId: "resp_earlier",
        tools: [
          { type: "file_search", vectorStoreIds: ["vs_1", "vs_2"] },
          {
            type: "mcp",
            serverUrl: "https://mcp.example.com/mcp",
            label: "filings",
            allowedTools: ["search"],
          },
          "code_interpreter",
          "web_search",
        ],
      })
      .result();
    expect(posts()[0]!.json).toEqual({
      model: "gpt-5.5-pro",
      input: "q",
      background: true,
      store: true,
      stream: false,
      previous_response_id: "resp_earlier",
      tools: [
        { type: "file_search", vector_store_ids: ["vs_1", "vs_2"] },
        {
          type: "mcp",
          server_label: "filings",
          server_url: "https://mcp.example.com/mcp",
          require_approval: "never",
          allowed_tools: ["search"],
        },
        { type: "code_interpreter", container: { type: "auto" } },
        { type: "web_search_preview" },
      ],
    });
  });

  it("rejects what the engine cannot do before any request is sent", () => {
    const client = makeClient();
    const attempt = (request: Parameters<typeof client.research.start>[0]) => {
      try {
        client.research.start(request);
      } catch (error) {
        return error as UnsupportedOptionError;
      }
      throw new Error("accepted");
    };
    const threeStores = attempt({
      model: STREAMING_MODEL,
      query: "q",
      tools: [{ type: "file_search", vectorStoreIds: ["vs_1", "vs_2", "vs_3"] }],
    });
    expect(UnsupportedOptionError.isInstance(threeStores)).toBe(true);
    expect(threeStores.option).toBe("tools");
    expect(threeStores.message).toMatch(/at most 2 vector store ids/);
    // Two tools with two stores each are four stores in all.
    expect(
      UnsupportedOptionError.isInstance(
        attempt({
          model: POLL_MODEL,
          query: "q",
          tools: [
            { type: "file_search", vectorStoreIds: ["vs_1", "vs_2"] },
            { type: "file_search", vectorStoreIds: ["vs_3", "vs_4"] },
          ],
        }),
      ),
    ).toBe(true);
    expect(attempt({ model: POLL_MODEL, query: "q", idempotencyKey: "k" }).option).toBe("idempotencyKey");
    expect(attempt({ model: POLL_MODEL, query: "q", sources: { urls: ["https://a.example"] } }).option).toBe(
      "sources",
    );
    // o4-mini deep research has no follow-ups.
    expect(attempt({ model: STREAMING_MODEL, query: "q", previousJobId: "resp_1" }).option).toBe(
      "previousJobId",
    );
    // An mcp tool without a label does not even parse.
    expect(
      InvalidRequestError.isInstance(
        attempt({
          model: POLL_MODEL,
          query: "q",
          tools: [{ type: "mcp", serverUrl: "https://x.example" }],
        } as never),
      ),
    ).toBe(true);
    expect(seen).toHaveLength(0);
  });
});

describe("stream mapping", () => {
  it("maps a research stream: created, statuses, thinking, searches, text, citations in UTF-16, usage, done", async () => {
    streamFixture("research-web-search.sse");
    const expected = reportOfExpected("research-web-search.expected.json");
    const client = makeClient();
    const job = client.research.start({ model: STREAMING_MODEL, query: "q", reasoning: { summary: "auto" } });
    const events: ResearchEvent[] = [];
    let refAtCreated: unknown;
    for await (const event of job) {
      events.push(event);
      if (event.type === "created") refAtCreated = JSON.parse(JSON.stringify(job.toRef()));
    }

    expectSeqStrictlyIncreasing(events);
    expect(events[0]).toMatchObject({
      type: "created",
      jobId: "resp_0a1b2c3d4e5f60718293a4b5c6d7e8f9",
      provider: "openai",
      model: STREAMING_MODEL,
      cursor: "0",
    });
    expect(refAtCreated).toMatchObject({
      v: 1,
      provider: "openai",
      jobId: "resp_0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    });
    expect(ofType(events, "status").map((e) => e.status)).toEqual(["queued", "running", "completed"]);
    expect(ofType(events, "phase").map((e) => e.phase)).toEqual([
      "reasoning",
      "searching",
      "reasoning",
      "writing",
    ]);
    expect(
      ofType(events, "thinking")
        .map((e) => e.delta)
        .join(""),
    ).toBe(
      "**Planning the search**\n\nI'll look for the 2025 application dates of the regulation." +
        "\n\n**Checking primary sources**\n\nThe Official Journal text should confirm the dates.",
    );
    expect(
      ofType(events, "search").map(({ action, state, query, url }) => ({ action, state, query, url })),
    ).toEqual([
      { action: "search", state: "started", query: undefined, url: undefined },
      {
        action: "search",
        state: "completed",
        query: "EU Battery Regulation 2023/1542 obligations applying 2025",
        url: undefined,
      },
      { action: "search", state: "started", query: undefined, url: undefined },
      {
        action: "open_page",
        state: "completed",
        query: undefined,
        url: "https://example.org/eu-battery-regulation-timeline",
      },
      { action: "search", state: "started", query: undefined, url: undefined },
      {
        action: "find_in_page",
        state: "completed",
        query: "due diligence",
        url: "https://example.org/eu-battery-regulation-timeline",
      },
    ]);

    const report = textOf(events);
    expect(report).toBe(expected.report);
    const citations = ofType(events, "citation").map((e) => e.citation);
    expect(citations).toHaveLength(3);
    for (const [i, annotation] of expected.annotations.entries()) {
      const citation = citations[i]!;
      expect(citation.url).toBe(annotation.url);
      // The span the server meant (code points), found at our UTF-16 offsets, through emoji and CJK.
      expect(report.slice(citation.startIndex, citation.endIndex)).toBe(
        codePointSlice(report, annotation.start_index, annotation.end_index),
      );
      expect(report.slice(citation.startIndex, citation.endIndex)).toMatch(/^\(\[.*\]\(https:\/\/.*\)\)$/);
    }
    // The third citation sits after 👨‍👩‍👧 and 🇯🇵: UTF-16 and code point offsets differ there.
    expect(citations[2]!.startIndex).toBeGreaterThan(expected.annotations[2]!.start_index);
    expect(citations[0]).toMatchObject({ title: "EU battery regulation timeline" });

    const usage = ofType(events, "usage").at(-1)!.usage;
    expect(usage).toMatchObject({
      inputTokens: 18211,
      outputTokens: 512,
      reasoningTokens: 4608,
      searches: 3,
    });
    // $2/M input, $8/M output and reasoning, $10 per thousand searches (catalog estimate).
    expect(usage.costUSD).toBeCloseTo(18211 * 2e-6 + 512 * 8e-6 + 4608 * 8e-6 + 3 * 0.01, 6);
    expect(usage.costSource).toBe("estimate");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    // Every mapped event carries the SSE payload it came from.
    const text = ofType(events, "text")[0]!;
    expect(text.rawEvent).toMatchObject({ type: "response.output_text.delta" });
    expect(text.cursor).toBe(String((text.rawEvent as { sequence_number: number }).sequence_number));

    const result = await job.result();
    expect(result.report).toBe(expected.report);
    expect(result.citations.map((c) => c.url)).toEqual(expected.annotations.map((a) => a.url));
    expect(result.status).toBe("completed");
  });

  it("annotations that arrive after all the text, a search without `.completed`, and an action-less added item", async () => {
    streamFixture("annotations-at-end.sse");
    const expected = reportOfExpected("annotations-at-end.expected.json");
    const events = await collect(makeClient().research.start({ model: STREAMING_MODEL, query: "q" }));
    const report = textOf(events);
    expect(report).toBe(expected.report);
    const citations = ofType(events, "citation").map((e) => e.citation);
    expect(citations.map((c) => report.slice(c.startIndex, c.endIndex))).toEqual(
      expected.annotations.map((a) => codePointSlice(report, a.start_index, a.end_index)),
    );
    expect(ofType(events, "search").map(({ action, state, query }) => ({ action, state, query }))).toEqual([
      { action: "search", state: "started", query: undefined },
      { action: "search", state: "completed", query: "Tokyo population 2025" },
    ]);
    expect(ofType(events, "usage").at(-1)!.usage).toMatchObject({ searches: 1, outputTokens: 128 });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("maps file search, MCP and code interpreter calls as tool events", async () => {
    streamFixture("tools.sse");
    const events = await collect(makeClient().research.start({ model: STREAMING_MODEL, query: "q" }));
    expect(
      ofType(events, "tool").map(({ name, state, callId, input, output }) => ({
        name,
        state,
        callId,
        input,
        output,
      })),
    ).toEqual([
      {
        name: "mcp",
        state: "started",
        callId: "mcpl_0c72b1033351981300690ccf79e4",
        input: { server: "filings", operation: "list_tools" },
        output: undefined,
      },
      {
        name: "mcp",
        state: "completed",
        callId: "mcpl_0c72b1033351981300690ccf79e4",
        input: { server: "filings", operation: "list_tools" },
        output: { tools: ["search_filings"] },
      },
      {
        name: "file_search",
        state: "started",
        callId: "fs_06456cb9918b63780068cacd74a1dc81",
        input: undefined,
        output: undefined,
      },
      {
        name: "file_search",
        state: "completed",
        callId: "fs_06456cb9918b63780068cacd74a1dc81",
        input: { queries: ["battery due diligence obligations", "carbon footprint declaration date"] },
        output: undefined,
      },
      {
        name: "mcp",
        state: "started",
        callId: "mcp_0c72b1033351981300690ccf7fa1",
        input: { server: "filings", tool: "search_filings" },
        output: undefined,
      },
      {
        name: "mcp",
        state: "completed",
        callId: "mcp_0c72b1033351981300690ccf7fa1",
        input: {
          server: "filings",
          tool: "search_filings",
          arguments: { query: "battery regulation 2025 filings" },
        },
        output: '{"results":[{"title":"Annual report 2025"}]}',
      },
      {
        name: "code_interpreter",
        state: "started",
        callId: "ci_68c2e6f7b72c8193ba1f552552c8dc92",
        input: undefined,
        output: undefined,
      },
      {
        name: "code_interpreter",
        state: "completed",
        callId: "ci_68c2e6f7b72c8193ba1f552552c8dc92",
        input: { code: "rows = [12, 30]\nsum(rows)\n" },
        output: [{ type: "logs", logs: "42" }],
      },
    ]);
    expect(ofType(events, "search")).toEqual([]);
    expect(ofType(events, "usage").at(-1)!.usage).toMatchObject({
      searches: 0,
      inputTokens: 6047,
      outputTokens: 215,
    });
    expect(textOf(events)).toBe("The filings list 42 obligations in total.");
  });

  it.each([
    ["error-nested.sse", "insufficient_quota", /exceeded your current quota/],
    ["error-flat.sse", "server_error", /server had an error/],
    ["failed-only.sse", "vector_store_timeout", /vector store/],
  ])(
    "an in-stream failure (%s) ends the job failed with the provider's code",
    async (name, code, message) => {
      streamFixture(name);
      const job = makeClient().research.start({ model: STREAMING_MODEL, query: "q" });
      const events = await collect(job);
      const errors = ofType(events, "error");
      expect(errors).toHaveLength(1);
      expect(errors[0]!.error).toMatchObject({ code, retryable: false });
      expect(errors[0]!.error.message).toMatch(message);
      expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });
      const error = await job.result().catch((e: unknown) => e);
      if (code === "insufficient_quota") {
        // An exhausted quota is the same cause as a 402, whichever way it was reported.
        expect(InsufficientCreditError.isInstance(error)).toBe(true);
        expect((error as Error).message).toContain("insufficient_quota");
      } else {
        expect(ProviderJobError.isInstance(error)).toBe(true);
        expect(error).toMatchObject({ code: "job_failed", providerCode: code });
      }
      expect(seen).toHaveLength(1);
    },
  );

  it("a response cut by max_output_tokens ends incomplete, with the partial report and a gap", async () => {
    streamFixture("incomplete.sse");
    const job = makeClient().research.start({ model: STREAMING_MODEL, query: "q" });
    const events = await collect(job);
    expect(ofType(events, "gap")[0]!.gap).toMatchObject({ kind: "budget-exhausted" });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
    const result = await job.result();
    expect(result.status).toBe("incomplete");
    expect(result.report).toBe("The first section covers the 2025 obligations, and the sec");
    expect(result.usage).toMatchObject({ outputTokens: 96, reasoningTokens: 4000 });
  });

  it("ignores event types it does not map (with a debug log), keepalive comments and a [DONE] line", async () => {
    // A type no spec lists yet, numbered into the gap it leaves before `response.completed`.
    const original = fixture("unmapped-events.sse");
    const last = sseData(original).at(-1)!.sequence_number as number;
    const future = sseText(
      [{ type: "response.hologram.delta", sequence_number: last, delta: "x" }],
      framing.openai,
    );
    const transcript = original
      .replace(
        "event: response.image_generation_call.in_progress",
        `: keepalive\n\nevent: response.image_generation_call.in_progress`,
      )
      .replace(`"sequence_number":${last},`, `"sequence_number":${last + 1},`)
      .replace(/(event: response\.completed)/, `${future}$1`)
      .concat("data: [DONE]\n\n");
    server.route({ [RESPONSES]: stream(transcript) });
    const logged: Logged[] = [];
    const job = makeClient({}, logged).research.start({ model: STREAMING_MODEL, query: "q" });
    const events = await collect(job);
    expect(textOf(events)).toBe("Done.");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const ignored = logged
      .filter((l) => l.level === "debug" && /ignored/.test(l.message))
      .map((l) => l.data?.type);
    expect(ignored).toEqual(expect.arrayContaining(["image_generation_call", "response.hologram.delta"]));
  });
});

describe("abort", () => {
  it("abort() only closes the connection: no cancel is sent, and the ref re-attaches to the whole report", async () => {
    streamFixture("research-web-search.sse");
    server.route({ [RESPONSE]: stream(fixture("research-web-search.sse")) });
    const client = makeClient();
    const job = client.research.start({ model: STREAMING_MODEL, query: "q" });
    const before: ResearchEvent[] = [];
    const stopped = await (async () => {
      for await (const event of job) {
        before.push(event);
        if (event.type === "text") job.abort("user navigated away");
      }
    })().catch((e: unknown) => e);
    expect(JobAbortedError.isInstance(stopped)).toBe(true);
    expect(seen.some((s) => s.url.pathname.endsWith("/cancel"))).toBe(false);
    const again = makeClient().research.attach(JSON.parse(JSON.stringify(job.toRef())));
    const after = await collect(again);
    expect(textOf(before) + textOf(after)).toBe(reportOfExpected("research-web-search.expected.json").report);
    expect(seen.map((s) => `${s.method} ${s.url.pathname}${s.url.search}`)).toEqual([
      "POST /v1/responses",
      "GET /v1/responses/resp_0a1b2c3d4e5f60718293a4b5c6d7e8f9?stream=true",
    ]);
  });
});

describe("HTTP errors on the start request", () => {
  it("401: AuthenticationError that says what to check, without the key, and no retry", async () => {
    server.route({ [RESPONSES]: httpError("http/invalid-key.401.json", 401) });
    const job = makeClient().research.start({ model: POLL_MODEL, query: "q" });
    const events = await collect(job);
    const error = await job.result().catch((e: unknown) => e);
    expect(AuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/Check the openai API key/);
    expect(JSON.stringify(events)).not.toContain(KEY);
    expect((error as Error).message).not.toContain(KEY);
    expect(posts()).toHaveLength(1);
  });

  it("429 insufficient_quota: InsufficientCreditError, not retried", async () => {
    server.route({ [RESPONSES]: httpError("http/insufficient-quota.429.json", 429) });
    const job = makeClient().research.start({ model: STREAMING_MODEL, query: "q" });
    const events = await collect(job);
    const error = await job.result().catch((e: unknown) => e);
    expect(InsufficientCreditError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: false, status: 429, code: "insufficient_credit" });
    expect((error as Error).message).toMatch(/Add credit/);
    expect(ofType(events, "error")[0]!.error).toMatchObject({
      code: "insufficient_credit",
      retryable: false,
    });
    expect(posts()).toHaveLength(1);
  });

  it("429 with Retry-After before a response id: retried after the delay (the status line proves nothing started)", async () => {
    server.route({
      [RESPONSES]: [
        httpError("http/rate-limit.429.json", 429, { "retry-after": "1", "x-request-id": "req_abc" }),
        stream(fixture("research-web-search.sse")),
      ],
    });
    // The 1 s wait is within retry.maxDelayMs, so it is waited out (and logged) and the POST resent once.
    const logged: Logged[] = [];
    const result = await makeClient({ retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 2_000 } }, logged)
      .research.start({ model: STREAMING_MODEL, query: "q" })
      .result();
    expect(result.status).toBe("completed");
    expect(posts()).toHaveLength(2);
    expect(posts()[1]!.at - posts()[0]!.at).toBeGreaterThanOrEqual(950);
    expect(logged.filter((l) => l.level === "info" && /rate limited/.test(l.message))).toHaveLength(1);
  });

  it("a 500 before a response id is retried; a 400 is not", async () => {
    server.route({
      [RESPONSES]: [httpError("http/server-error.500.json", 500), stream(fixture("research-web-search.sse"))],
    });
    expect((await makeClient().research.start({ model: STREAMING_MODEL, query: "q" }).result()).status).toBe(
      "completed",
    );
    expect(posts()).toHaveLength(2);

    seen.length = 0;
    server.route({
      [RESPONSES]: json(
        {
          error: {
            message: "Unknown parameter: 'foo'.",
            type: "invalid_request_error",
            param: "foo",
            code: "unknown_parameter",
          },
        },
        { status: 400 },
      ),
    });
    const error = await makeClient()
      .research.start({ model: STREAMING_MODEL, query: "q" })
      .result()
      .catch((e: unknown) => e);
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "invalid_request", providerCode: "unknown_parameter", status: 400 });
    expect(posts()).toHaveLength(1);
  });

  it("RateLimitError keeps Retry-After for the caller when retries run out", async () => {
    server.route({ [RESPONSES]: httpError("http/rate-limit.429.json", 429, { "retry-after-ms": "5" }) });
    const job = makeClient({ retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 5 } }).research.start({
      model: STREAMING_MODEL,
      query: "q",
    });
    const error = await job.result().catch((e: unknown) => e);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect((error as RateLimitError).retryAfterMs).toBe(5);
    expect(posts()).toHaveLength(2);
  });
});

describe("poll-only models (gpt-5.5-pro)", () => {
  function pollServer(sequence: string[], cancel?: string) {
    server.route({
      [RESPONSES]: jsonFixture("openai/poll/pro.queued.json"),
      // The last snapshot answers every later poll.
      [RESPONSE]: (call) => jsonFixture(`openai/${sequence[Math.min(call.n, sequence.length - 1)]!}`),
      [CANCEL]: jsonFixture(`openai/${cancel ?? "poll/pro.cancelled.json"}`),
    });
  }

  it("status heartbeats while polling, then the whole report as one text event, citations, usage, done", async () => {
    pollServer(["poll/pro.in-progress.json", "poll/pro.in-progress.json", "poll/pro.completed.json"]);
    const expected = reportOfExpected("poll/pro.expected.json");
    const job = makeClient().research.start({ model: POLL_MODEL, query: "q" });
    const events = await collect(job);
    expect(events.map((e) => (e.type === "status" ? `status:${e.status}` : e.type))).toEqual([
      "created",
      "status:queued",
      "status:running",
      "status:running",
      // The research trail recorded in the polled body, before the report.
      "search",
      "search",
      "text",
      "citation",
      "citation",
      "usage",
      "status:completed",
      "done",
    ]);
    const report = ofType(events, "text")[0]!.delta;
    expect(report).toBe(expected.report);
    const citations = ofType(events, "citation").map((e) => e.citation);
    expect(citations.map((c) => report.slice(c.startIndex, c.endIndex))).toEqual(
      expected.annotations.map((a) => codePointSlice(report, a.start_index, a.end_index)),
    );
    expect(ofType(events, "usage")[0]!.usage).toMatchObject({
      inputTokens: 41200,
      outputTokens: 1800,
      reasoningTokens: 7300,
      searches: 2,
    });
    expect(posts()).toHaveLength(1);
    expect(posts()[0]!.json).toMatchObject({ background: true, stream: false, store: true });
    expect(seen.filter((s) => s.method === "GET")).toHaveLength(3);
    expect((await job.result()).report).toBe(expected.report);
  });

  it("a poll answered with Retry-After waits that long before the next GET (the backoff alone is shorter)", async () => {
    server.route({
      [RESPONSES]: jsonFixture("openai/poll/pro.queued.json"),
      [RESPONSE]: [
        jsonFixture("openai/poll/pro.in-progress.json", { headers: { "retry-after-ms": "150" } }),
        jsonFixture("openai/poll/pro.completed.json"),
      ],
    });
    const result = await makeClient().research.start({ model: POLL_MODEL, query: "q" }).result();
    expect(result.status).toBe("completed");
    const gets = server.callsTo(RESPONSE).map((call) => call.at);
    expect(gets).toHaveLength(2);
    expect(gets[1]! - gets[0]!, "polled again before the server's Retry-After").toBeGreaterThanOrEqual(145);
  });

  it("a terminal `incomplete` poll maps to status incomplete with a gap", async () => {
    pollServer(["poll/pro.incomplete.json"]);
    const job = makeClient().research.start({ model: POLL_MODEL, query: "q" });
    const events = await collect(job);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
    expect(ofType(events, "gap")).toHaveLength(1);
    expect((await job.result()).report).toBe("# Battery rules 🔋\n\nThe EU moved");
  });

  it("a job cancelled elsewhere (the poll says cancelled) ends cancelled, not failed", async () => {
    pollServer(["poll/pro.in-progress.json", "poll/pro.cancelled.json"]);
    const job = makeClient().research.start({ model: POLL_MODEL, query: "q" });
    const events = await collect(job);
    expect(events.slice(-2)).toMatchObject([
      { type: "status", status: "cancelled" },
      { type: "done", status: "cancelled" },
    ]);
    expect((await job.result()).status).toBe("cancelled");
    expect(seen.some((s) => s.url.pathname.endsWith("/cancel"))).toBe(false);
  });

  it("get(ref) is one GET returning status, report, citations and usage", async () => {
    pollServer(["poll/pro.completed.json"]);
    const client = makeClient();
    const ref: JobRef = {
      v: 1,
      provider: "openai",
      model: POLL_MODEL,
      jobId: "resp_68d1c0ffee00112233445566778899aa",
      createdAt: "2026-06-01T00:00:00.000Z",
      resume: {},
    };
    const snapshot = await client.research.get(ref);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url.pathname).toBe("/v1/responses/resp_68d1c0ffee00112233445566778899aa");
    expect(snapshot).toMatchObject({
      provider: "openai",
      status: "completed",
      report: reportOfExpected("poll/pro.expected.json").report,
      usage: { inputTokens: 41200, searches: 2, costSource: "estimate" },
    });
    expect(snapshot.citations).toHaveLength(2);
    expect(snapshot.usage!.costUSD).toBeGreaterThan(0);
  });

  it("research.cancel(ref) reports cancelled, pending, or already-terminal (completion won)", async () => {
    const client = makeClient();
    const ref: JobRef = {
      v: 1,
      provider: "openai",
      model: POLL_MODEL,
      jobId: "resp_68d1c0ffee00112233445566778899aa",
      createdAt: "2026-06-01T00:00:00.000Z",
      resume: {},
    };
    pollServer([], "poll/pro.cancelled.json");
    expect(await client.research.cancel(ref)).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect(seen.map((s) => `${s.method} ${s.url.pathname}`)).toEqual([
      "POST /v1/responses/resp_68d1c0ffee00112233445566778899aa/cancel",
    ]);
    pollServer([], "poll/pro.in-progress.json");
    expect(await client.research.cancel(ref)).toMatchObject({ outcome: "pending" });
    pollServer([], "poll/pro.completed.json");
    expect(await client.research.cancel(ref)).toMatchObject({
      outcome: "already-terminal",
      finalStatus: "completed",
    });
    // A server that refuses to cancel a finished job: the GET says what happened.
    server.route({
      [CANCEL]: json(
        {
          error: {
            message: "Cannot cancel a completed response.",
            type: "invalid_request_error",
            param: null,
            code: null,
          },
        },
        { status: 400 },
      ),
      [RESPONSE]: jsonFixture("openai/poll/pro.completed.json"),
    });
    expect(await client.research.cancel(ref)).toMatchObject({
      outcome: "already-terminal",
      finalStatus: "completed",
    });
  });

  it("job.cancel() racing completion: completion wins, the report is delivered and done is completed", async () => {
    pollServer(["poll/pro.in-progress.json", "poll/pro.completed.json"], "poll/pro.completed.json");
    const job = makeClient().research.start({ model: POLL_MODEL, query: "q" });
    const events: ResearchEvent[] = [];
    let outcome: unknown;
    for await (const event of job) {
      events.push(event);
      if (event.type === "status" && event.status === "running") outcome = await job.cancel();
    }
    expect(outcome).toMatchObject({ outcome: "already-terminal", finalStatus: "completed" });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect((await job.result()).report).toBe(reportOfExpected("poll/pro.expected.json").report);
  });

  it("job.cancel() that wins ends the job cancelled", async () => {
    pollServer(["poll/pro.in-progress.json"], "poll/pro.cancelled.json");
    const job = makeClient().research.start({ model: POLL_MODEL, query: "q" });
    const events: ResearchEvent[] = [];
    for await (const event of job) {
      events.push(event);
      if (event.type === "status" && event.status === "running") {
        expect(await job.cancel()).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
      }
    }
    expect(events.slice(-2)).toMatchObject([
      { type: "status", status: "cancelled" },
      { type: "done", status: "cancelled" },
    ]);
    expect((await job.result()).status).toBe("cancelled");
  });

  it("attach(ref) after the report was delivered does not deliver it again", async () => {
    pollServer(["poll/pro.completed.json"]);
    const client = makeClient();
    const first = client.research.start({ model: POLL_MODEL, query: "q" });
    let ref!: JobRef;
    for await (const event of first) {
      if (event.type === "citation") {
        ref = JSON.parse(JSON.stringify(first.toRef()));
        break;
      }
    }
    const again = makeClient().research.attach(ref);
    const events = await collect(again);
    expect(ofType(events, "text")).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(["citation", "usage", "status", "done"]);
    const result = await again.result();
    expect(result.report).toBe(reportOfExpected("poll/pro.expected.json").report);
    expect(result.citations).toHaveLength(2);
  });
});

describe("refs", () => {
  it("hold no key, and a tampered resume field is named", async () => {
    streamFixture("research-web-search.sse");
    const job = makeClient().research.start({ model: STREAMING_MODEL, query: "q" });
    await job.result();
    const ref = job.toRef();
    expect(JSON.stringify(ref)).not.toContain(KEY);
    expect(ref.resume).toEqual({
      reportLength: expect.any(Number),
      citations: 3,
      trail: 3,
      endedAt: "114",
      // The stream delivered every search: its ending repeats none of them.
      last: { cursor: "114", text: 0, citations: 0, trail: 0 },
    });
    const error = (() => {
      try {
        makeClient().research.attach({ ...ref, resume: { reportLength: "lots" } });
      } catch (e) {
        return e;
      }
    })();
    expect(InvalidRefError.isInstance(error)).toBe(true);
    expect((error as InvalidRefError).field).toBe("resume.reportLength");
  });

  it("an answer without a response id to the start POST is an IndeterminateSubmissionError", async () => {
    server.route({ [RESPONSES]: json({ object: "response" }) });
    const error = await makeClient()
      .research.start({ model: POLL_MODEL, query: "q" })
      .result()
      .catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect(posts()).toHaveLength(1);
  });
});

describe("refs taken part-way through one wire event", () => {
  const RESP = "resp_5ee0000000000000000000000000000b";
  const MSG = "msg_5ee00000000000000000000b";
  const REPORT = "Alpha beta gamma delta.";
  const annotations = [
    { type: "url_citation", start_index: 0, end_index: 5, url: "https://a.example/", title: "A" },
    { type: "url_citation", start_index: 11, end_index: 16, url: "https://b.example/", title: "B" },
    { type: "url_citation", start_index: 17, end_index: 22, url: "https://c.example/", title: "C" },
  ];
  const response = (status: string, output: unknown[] = [], usage: unknown = null) => ({
    id: RESP,
    object: "response",
    status,
    background: true,
    model: "o4-mini-deep-research-2025-06-26",
    output,
    usage,
  });
  const message = {
    id: MSG,
    type: "message",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: REPORT, annotations }],
  };
  const usage = { input_tokens: 100, output_tokens: 50, output_tokens_details: { reasoning_tokens: 10 } };
  const finished = response("completed", [message], usage);
  const item = { item_id: MSG, output_index: 0, content_index: 0 };
  /** `text` holds the first deltas; the last two annotations wait for text that only `output_text.done` brings. */
  /** `deltas`, then the three annotations (the last two wait for text not streamed yet), then the end. */
  const events = (deltas: string[], { textDone = true, later = [] as string[] } = {}) =>
    [
      { type: "response.created", response: response("queued") },
      { type: "response.in_progress", response: response("in_progress") },
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { id: MSG, type: "message", content: [] },
      },
      {
        type: "response.content_part.added",
        ...item,
        part: { type: "output_text", text: "", annotations: [] },
      },
      ...deltas.map((delta) => ({ type: "response.output_text.delta", ...item, delta })),
      ...annotations.map((annotation, annotation_index) => ({
        type: "response.output_text.annotation.added",
        ...item,
        annotation_index,
        annotation,
      })),
      ...later.map((delta) => ({ type: "response.output_text.delta", ...item, delta })),
      ...(textDone
        ? [
            { type: "response.output_text.done", ...item, text: REPORT },
            { type: "response.output_item.done", output_index: 0, item: message },
          ]
        : []),
      { type: "response.completed", response: finished },
    ].map((event, sequence_number) => ({ ...event, sequence_number }));
  const body = (list: Record<string, unknown>[]) => sseText(list, framing.openai);

  /** Starts a streamed job, stops after `stop` events (the process dies), returns them and the ref. */
  async function runUntil(transcript: Record<string, unknown>[], stop: (e: ResearchEvent) => boolean) {
    // An empty transcript: the caller has installed the server already.
    if (transcript.length > 0) server.route({ [RESPONSES]: stream(body(transcript)) });
    const job = makeClient().research.start({ model: STREAMING_MODEL, query: "q" });
    const before: ResearchEvent[] = [];
    for await (const event of job) {
      before.push(event);
      if (stop(event)) break;
    }
    server.reset();
    return { before, ref: JSON.parse(JSON.stringify(job.toRef())) };
  }

  /** A GET that refuses to replay the stream and answers polls with the finished response. */
  const refusedReplay = (call: { url: URL }): Reply =>
    call.url.searchParams.get("stream") === "true"
      ? httpError("http/stream-too-old.400.json", 400)
      : json(finished);

  /** Attaches where the server refuses to replay the stream, so the job is followed by polling. */
  async function attachRefused(ref: JobRef) {
    server.route({ [`GET ${BASE}/responses/${RESP}`]: refusedReplay });
    const job = makeClient().research.attach(ref);
    return { after: await collect(job), result: await job.result() };
  }

  it("citations mapped from the same event as delivered text, but not yet delivered, come after attach with a refused replay", async () => {
    // `output_text.done` brings the rest of the text and releases the two waiting citations.
    const transcript = events(["Alpha beta "]);
    const done = transcript.find((e) => e.type === "response.output_text.done")!;
    const { before, ref } = await runUntil(
      transcript,
      (e) => e.type === "text" && e.cursor === String(done.sequence_number),
    );
    expect(ref).toMatchObject({ cursor: String(done.sequence_number), cursorOffset: 1 });
    expect(ofType(before, "citation")).toHaveLength(1);

    const { after, result } = await attachRefused(ref);
    expect(textOf(before) + textOf(after)).toBe(REPORT);
    const cited = [...before, ...after].filter((e) => e.type === "citation").map((e) => e.citation.url);
    expect(cited).toEqual(annotations.map((a) => a.url));
    expect(result.citations.map((c) => c.url)).toEqual(annotations.map((a) => a.url));
    expect(after.map((e) => e.type)).toEqual(["citation", "citation", "usage", "status", "done"]);
  });

  it("an annotation that arrived before its text is delivered as soon as that text has arrived", async () => {
    const transcript = events(["Alpha beta "], { later: ["gamma ", "delta."] });
    server.route({ [RESPONSES]: stream(body(transcript)) });
    const delivered = await collect(makeClient().research.start({ model: STREAMING_MODEL, query: "q" }));
    const cursorOf = (delta: string) =>
      String(transcript.find((e) => (e as { delta?: unknown }).delta === delta)!.sequence_number);
    const around = delivered
      .filter((e) => e.type === "text" || e.type === "citation")
      .map((e) => (e.type === "text" ? e.delta : e.citation.url));
    expect(around).toEqual([
      "Alpha beta ",
      "https://a.example/",
      "gamma ",
      "https://b.example/",
      "delta.",
      "https://c.example/",
    ]);
    // Each comes with the delta that completed its text, not at `output_text.done`.
    expect(ofType(delivered, "citation").map((e) => e.cursor)).toEqual([
      expect.any(String),
      cursorOf("gamma "),
      cursorOf("delta."),
    ]);
    const report = textOf(delivered);
    expect(
      ofType(delivered, "citation").map((e) => report.slice(e.citation.startIndex, e.citation.endIndex)),
    ).toEqual(["Alpha", "gamma", "delta"]);
  });

  it.each([
    ["after its text", "text", ["citation", "citation", "usage", "status", "done"]],
    ["between its usage and status", "usage", ["status", "done"]],
  ] as const)(
    "a ref taken part-way through the job's ending (%s), then a refused replay: the rest of it, once",
    async (_label, stopType, rest) => {
      // No `output_text.done`: `response.completed` brings the rest of the text and the two waiting citations.
      const transcript = events(["Alpha beta "], { textDone: false });
      const completed = String(transcript.at(-1)!.sequence_number);
      const { before, ref } = await runUntil(
        transcript,
        (e) => e.type === stopType && e.cursor === completed,
      );
      expect(ref).toMatchObject({ cursor: completed, cursorOffset: expect.any(Number) });

      const { after, result } = await attachRefused(ref);
      expect(after.map((e) => e.type)).toEqual(rest);
      expect(textOf(before) + textOf(after)).toBe(REPORT);
      const cited = [...before, ...after].filter((e) => e.type === "citation").map((e) => e.citation.url);
      expect(cited).toEqual(annotations.map((a) => a.url));
      expect(result.citations.map((c) => c.url)).toEqual(annotations.map((a) => a.url));
      expect(result.usage).toMatchObject({ inputTokens: 100, outputTokens: 40, reasoningTokens: 10 });
    },
  );

  it.each([
    ["after its text", "text"],
    ["after its first citation", "citation"],
    ["after its usage", "usage"],
  ] as const)(
    "a ref taken part-way through the final poll snapshot (%s) after a cut and a refused resume: the rest of it, once",
    async (_label, stopType) => {
      const transcript = events(["Alpha beta "]);
      const cutAfter = transcript.findIndex((e) => e.type === "response.output_text.delta");
      // The stream is cut after the first delta; the resume is refused, so the job is polled to its end.
      const script = () => {
        server.route({
          [RESPONSES]: dropAfter(body(transcript), cutAfter + 1),
          [`GET ${BASE}/responses/${RESP}`]: refusedReplay,
        });
      };
      script();
      const whole = await collect(makeClient().research.start({ model: STREAMING_MODEL, query: "q" }));
      const fromPoll = (e: ResearchEvent) => (e.rawEvent as { object?: unknown }).object === "response";
      expect(whole.filter((e) => e.type === stopType && fromPoll(e))).not.toHaveLength(0);
      server.reset();

      script();
      const { before, ref } = await runUntil([], (e) => e.type === stopType && fromPoll(e));
      const { after, result } = await attachRefused(ref);
      const strip = (list: ResearchEvent[]) => list.map(({ seq: _seq, ...rest }) => rest);
      // Together, exactly the uninterrupted run: nothing lost, nothing twice.
      expect(strip([...before, ...after])).toEqual(strip(whole));
      expect(result.citations.map((c) => c.url)).toEqual(annotations.map((a) => a.url));
    },
  );
});
