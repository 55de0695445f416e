/**
 * OpenRouter contract: recorded-format transcripts (test/fixtures/openrouter/) served
 * over msw in small byte pieces, driven through the public client like a user would.
 */
import { describe, expect, it } from "vitest";
import { handlers } from "../../providers/openrouter/testing.js";
import {
  InsufficientCreditError,
  ProviderJobError,
  Sonde,
  SondeError,
  UnsupportedOptionError,
} from "../../src/index.js";
import { sseData, sseEvent } from "../helpers/sse.js";
import {
  createTestServer,
  json,
  jsonFixture,
  networkError,
  sse as sseReply,
} from "../helpers/test-server.js";
import { BASE, collect, fastRetry, fixture, KEY, sseInPieces } from "./helpers.js";

const server = createTestServer();
const COMPLETIONS = `POST ${BASE}/chat/completions`;

const client = () =>
  new Sonde({
    openrouter: { apiKey: KEY, baseURL: BASE, appName: "Sonde tests", appUrl: "https://sonde.test" },
    retry: fastRetry,
    idleTimeoutMs: 2_000,
    env: {},
  });

/** Streams `sse` for every completion request; returns the recorded requests. */
function serve(sse: string) {
  server.route({ [COMPLETIONS]: sseInPieces(sse) });
  return server.callsTo(COMPLETIONS);
}

/** One streamed chunk of generation `id`, as OpenRouter writes it (`extra`: top-level fields on every chunk). */
const chunkOf =
  (id: string, extra: object = {}) =>
  (delta: object, finish: string | null = null, more: object = {}) =>
    sseEvent({
      id,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
      ...more,
    });
/** The last chunk (finish, usage with the charge) and the end of the stream. */
const stopWith = (chunk: ReturnType<typeof chunkOf>) =>
  `${chunk({ content: "" }, "stop", { usage: { prompt_tokens: 1, completion_tokens: 1, cost: 0.001 } })}data: [DONE]\n\n`;

const query = "What changed in EU battery regulation in 2025?";

describe("openrouter: streamed research", () => {
  it("maps the spec transcript: generation id → created, reasoning → thinking, content → text, 0/0 annotations → citations placed by their [n] markers, usage with OpenRouter's charge", async () => {
    const sse = fixture("sonar-deep-research.sse");
    const seen = serve(sse);
    const job = client().research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    const events = await collect(job);

    expect(events.map((e) => e.type)).toEqual([
      "created",
      "status",
      "thinking",
      "thinking",
      "text",
      "citation",
      "citation",
      "text",
      "citation",
      "citation",
      "usage",
      "status",
      "done",
    ]);
    expect(events[0]).toMatchObject({
      type: "created",
      jobId: "gen-1767000000-AbCdEfGhIjKlMnOpQrSt",
      provider: "openrouter",
      model: "openrouter:perplexity/sonar-deep-research",
    });
    // reasoning and reasoning_details carry the same text: it is delivered once.
    expect(events.filter((e) => e.type === "thinking").map((e) => e.delta)).toEqual([
      "Searching for the 2025 obligations of Regulation 2023/1542.",
      " Two sources agree on a 2027 postponement.",
    ]);
    const result = await job.result();
    const report = "Due-diligence duties were postponed to 2027[1][2].";
    expect(result.report).toBe(report);
    expect(result.status).toBe("completed");
    expect(result.citations).toEqual([
      {
        url: "https://example.org/eu-battery-regulation-timeline",
        title: "example.org/eu-battery-regulation-timeline",
        startIndex: report.indexOf("[1]"),
        endIndex: report.indexOf("[1]") + 3,
      },
      {
        url: "https://example.com/battery-news",
        title: "example.com/battery-news",
        startIndex: report.indexOf("[2]"),
        endIndex: report.indexOf("[2]") + 3,
      },
    ]);
    // The first sighting of each annotation has no position: start = end = 0 means none.
    const firstCitations = events.filter((e) => e.type === "citation").slice(0, 2);
    for (const e of firstCitations) expect(e.type === "citation" && e.citation.startIndex).toBeUndefined();
    expect(result.usage).toMatchObject({
      inputTokens: 21,
      outputTokens: 270,
      internalReasoningTokens: 1210,
      costUSD: 0.41,
      costSource: "provider",
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });

    // Every event but the SDK's own `done` carries the provider payload it came from.
    const payloads = sseData(sse, { keepDone: true });
    for (const event of events.slice(0, -1)) expect(payloads).toContainEqual(event.rawEvent);

    expect(seen).toHaveLength(1);
    expect(seen[0]!.json).toEqual({
      model: "perplexity/sonar-deep-research",
      messages: [{ role: "user", content: query }],
      stream: true,
      usage: { include: true },
    });
    expect(seen[0]!.headers.get("authorization")).toBe(`Bearer ${KEY}`);
    expect(seen[0]!.headers.get("x-title")).toBe("Sonde tests");
    expect(seen[0]!.headers.get("http-referer")).toBe("https://sonde.test");
  });

  it("splits an inline <think> block into thinking, reads the top-level citations list, and completes only once the usage chunk after the finish chunk has arrived", async () => {
    serve(fixture("inline-think-usage-after-finish.sse"));
    const job = client().research.start({
      model: "openrouter:perplexity/sonar-deep-research",
      query,
      instructions: "Cite primary sources.",
      asOf: "2025-12-31",
    });
    const events = await collect(job);
    const result = await job.result();
    const report =
      "Due-diligence duties moved to 2027 [2]; the €-denominated carbon-footprint thresholds slipped too [1][2].";
    expect(result.report).toBe(report);
    expect(
      events
        .filter((e) => e.type === "thinking")
        .map((e) => e.delta)
        .join(""),
    ).toBe("\nComparing the Commission’s proposal with the adopted text.");
    expect(result.citations).toEqual([
      {
        url: "https://example.org/eu-battery-regulation-timeline",
        startIndex: report.indexOf("[1]"),
        endIndex: report.indexOf("[1]") + 3,
      },
      {
        url: "https://example.com/battery-news",
        startIndex: report.indexOf("[2]"),
        endIndex: report.indexOf("[2]") + 3,
      },
    ]);
    // The list repeats on every chunk; each URL is announced once, then placed once.
    expect(events.filter((e) => e.type === "citation")).toHaveLength(4);
    const types = events.map((e) => e.type);
    expect(types.slice(-3)).toEqual(["usage", "status", "done"]);
    expect(result.usage).toMatchObject({
      inputTokens: 18,
      outputTokens: 250,
      internalReasoningTokens: 700,
      costUSD: 0.2875,
      costSource: "provider",
    });
  });

  it("converts positioned annotations from code points to UTF-16 offsets and reads reasoning summaries and search counts", async () => {
    serve(fixture("o4-mini-positioned-annotations.sse"));
    const job = client().research.start({ model: "openrouter:openai/o4-mini-deep-research", query });
    const events = await collect(job);
    const result = await job.result();
    expect(events.filter((e) => e.type === "thinking").map((e) => e.delta)).toEqual([
      "**Scoping the question**",
      "\n\nLooking for the passport start date.",
    ]);
    const report = result.report;
    const first = "([example.org](https://example.org/passport))";
    const second = "([example.com](https://example.com/recycled))";
    expect(result.citations).toEqual([
      {
        url: "https://example.org/passport",
        title: "Battery passport",
        snippet: "The battery passport applies from 18 February 2027.",
        startIndex: report.indexOf(first),
        endIndex: report.indexOf(first) + first.length,
      },
      {
        url: "https://example.com/recycled",
        title: "Recycled content",
        startIndex: report.indexOf(second),
        endIndex: report.indexOf(second) + second.length,
      },
    ]);
    for (const c of result.citations) {
      expect(report.slice(c.startIndex, c.endIndex)).toMatch(/^\(\[example\.(org|com)\]/);
    }
    expect(result.usage).toMatchObject({
      inputTokens: 40,
      outputTokens: 400,
      reasoningTokens: 4800,
      searches: 3,
      costUSD: 0.0632,
      costSource: "provider",
    });
  });

  it("turns a mid-stream error chunk into an error event and a failed job whose typed error keeps the partial report", async () => {
    serve(fixture("mid-stream-error.sse"));
    const job = client().research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    const events = await collect(job);
    expect(events.slice(-3)).toMatchObject([
      {
        type: "error",
        error: { code: "provider_unavailable", status: 502, retryable: true },
      },
      { type: "status", status: "failed" },
      { type: "done", status: "failed" },
    ]);
    const error = await job.result().catch((e: unknown) => e);
    expect(ProviderJobError.isInstance(error)).toBe(true);
    expect((error as ProviderJobError).message).toContain("Provider returned error");
    expect((error as ProviderJobError & { partial: { report: string } }).partial.report).toBe(
      "Due-diligence duties were postponed to 2027[1][2].",
    );
  });

  it("maps a 402 before the stream to InsufficientCreditError, sent once", async () => {
    server.route({ [COMPLETIONS]: jsonFixture("openrouter/payment-required.json", { status: 402 }) });
    const job = client().research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    const events = await collect(job);
    expect(events.map((e) => e.type)).toEqual(["error", "done"]);
    expect(events[0]).toMatchObject({
      error: { code: "insufficient_credit", status: 402, retryable: false },
    });
    const error = await job.result().catch((e: unknown) => e);
    expect(InsufficientCreditError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/requires more credits.*Add credit/);
    expect(server.callsTo(COMPLETIONS)).toHaveLength(1);
  });

  it("retries a 429 refused with a status line (no run was started) and then streams", async () => {
    server.route({
      [COMPLETIONS]: [
        json(
          {
            error: {
              code: 429,
              message: "Rate limit exceeded",
              metadata: { error_type: "rate_limit_exceeded" },
            },
          },
          { status: 429, headers: { "retry-after": "0" } },
        ),
        sseInPieces(fixture("sonar-deep-research.sse")),
      ],
    });
    const job = client().research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    expect((await job.result()).status).toBe("completed");
    expect(server.callsTo(COMPLETIONS)).toHaveLength(2);
  });

  it("places [n] markers that arrive in the same chunk as the annotations or the citations list they number", async () => {
    const chunk = chunkOf("gen-same");
    const annotation = (url: string) => ({
      type: "url_citation",
      url_citation: { url, title: url.slice(8), start_index: 0, end_index: 0 },
    });
    const end = stopWith(chunk);
    serve(
      chunk({
        content: "Duties moved to 2027 [1]; thresholds slipped [2].",
        annotations: [annotation("https://example.org/a"), annotation("https://example.com/b")],
      }) + end,
    );
    const viaAnnotations = await client()
      .research.start({ model: "openrouter:perplexity/sonar-deep-research", query })
      .result();
    const report = "Duties moved to 2027 [1]; thresholds slipped [2].";
    expect(viaAnnotations.report).toBe(report);
    expect(viaAnnotations.citations).toEqual([
      {
        url: "https://example.org/a",
        title: "example.org/a",
        startIndex: report.indexOf("[1]"),
        endIndex: report.indexOf("[1]") + 3,
      },
      {
        url: "https://example.com/b",
        title: "example.com/b",
        startIndex: report.indexOf("[2]"),
        endIndex: report.indexOf("[2]") + 3,
      },
    ]);

    server.reset();
    serve(
      chunk({ content: "Duties moved to 2027 [1]; thresholds slipped [2]." }, null, {
        citations: ["https://example.org/a", "https://example.com/b"],
      }) + end,
    );
    const viaList = await client()
      .research.start({ model: "openrouter:perplexity/sonar-deep-research", query })
      .result();
    expect(viaList.citations).toEqual([
      {
        url: "https://example.org/a",
        startIndex: report.indexOf("[1]"),
        endIndex: report.indexOf("[1]") + 3,
      },
      {
        url: "https://example.com/b",
        startIndex: report.indexOf("[2]"),
        endIndex: report.indexOf("[2]") + 3,
      },
    ]);
  });

  it("keeps the title and excerpt of annotations that arrive after a top-level citations list already named their URLs", async () => {
    const list = ["https://example.org/a", "https://example.com/b"];
    const chunk = chunkOf("gen-list", { citations: list });
    const annotation = (url: string, title: string, content: string) => ({
      type: "url_citation",
      url_citation: { url, title, content, start_index: 0, end_index: 0 },
    });
    serve(
      chunk({ content: "", reasoning: "Searching." }) +
        chunk({ content: "Duties moved to 2027 " }) +
        chunk({ content: "[1]; thresholds slipped [2]." }) +
        chunk({
          content: "",
          annotations: [
            annotation(list[0]!, "Timeline", "The Commission proposed…"),
            annotation(list[1]!, "Battery news", "Thresholds…"),
          ],
        }) +
        stopWith(chunk),
    );
    const result = await client()
      .research.start({ model: "openrouter:perplexity/sonar-deep-research", query })
      .result();
    const report = "Duties moved to 2027 [1]; thresholds slipped [2].";
    expect(result.report).toBe(report);
    expect(result.citations).toEqual([
      {
        url: list[0],
        title: "Timeline",
        snippet: "The Commission proposed…",
        startIndex: report.indexOf("[1]"),
        endIndex: report.indexOf("[1]") + 3,
      },
      {
        url: list[1],
        title: "Battery news",
        snippet: "Thresholds…",
        startIndex: report.indexOf("[2]"),
        endIndex: report.indexOf("[2]") + 3,
      },
    ]);
  });

  it("places a [n] marker that a chunk boundary splits, whichever character the next delta starts with", async () => {
    const chunk = chunkOf("gen-split");
    const annotation = (url: string) => ({
      type: "url_citation",
      url_citation: { url, title: url.slice(8), start_index: 0, end_index: 0 },
    });
    serve(
      chunk({
        content: "",
        annotations: [annotation("https://example.org/a"), annotation("https://example.com/b")],
      }) +
        chunk({ content: "Duties moved to 2027 [" }) +
        chunk({ content: "1]; thresholds slipped [2" }) +
        chunk({ content: "]." }) +
        stopWith(chunk),
    );
    const result = await client()
      .research.start({ model: "openrouter:perplexity/sonar-deep-research", query })
      .result();
    const report = "Duties moved to 2027 [1]; thresholds slipped [2].";
    expect(result.report).toBe(report);
    expect(result.citations).toEqual([
      {
        url: "https://example.org/a",
        title: "example.org/a",
        startIndex: report.indexOf("[1]"),
        endIndex: report.indexOf("[1]") + 3,
      },
      {
        url: "https://example.com/b",
        title: "example.com/b",
        startIndex: report.indexOf("[2]"),
        endIndex: report.indexOf("[2]") + 3,
      },
    ]);
  });

  it("a positioned annotation that arrives before its text gets no guessed position, and is placed when it is repeated after the text", async () => {
    const chunk = chunkOf("gen-early");
    const text = "Passports 🔋 start in 2027 ([example.org](https://example.org/passport)).";
    const link = "([example.org](https://example.org/passport))";
    // Code points, OpenAI's unit: the battery emoji is one code point but two UTF-16 units.
    const start = [...text.slice(0, text.indexOf(link))].length;
    const annotation = {
      type: "url_citation",
      url_citation: {
        url: "https://example.org/passport",
        title: "Battery passport",
        start_index: start,
        end_index: start + link.length,
      },
    };
    serve(
      chunk({ content: "Passports 🔋 ", annotations: [annotation] }) +
        chunk({ content: text.slice("Passports 🔋 ".length) }) +
        chunk({ content: "", annotations: [annotation] }) +
        stopWith(chunk),
    );
    const result = await client()
      .research.start({ model: "openrouter:openai/o4-mini-deep-research", query })
      .result();
    expect(result.report).toBe(text);
    expect(result.citations).toEqual([
      {
        url: "https://example.org/passport",
        title: "Battery passport",
        startIndex: text.indexOf(link),
        endIndex: text.indexOf(link) + link.length,
      },
    ]);
  });

  it("ignores chunks and annotation kinds it does not know, without failing the job", async () => {
    // A keepalive, unknown annotation kinds, an unknown object, a bare number, a tool call.
    const sse = fixture("unknown-chunks.sse");
    serve(sse);
    const result = await client()
      .research.start({ model: "openrouter:perplexity/sonar-deep-research", query })
      .result();
    expect(result).toMatchObject({ status: "completed", report: "Hi", citations: [] });
  });
});

describe("openrouter: what it cannot do, said clearly", () => {
  it("rejects tools before any request is sent", () => {
    const seen = serve(fixture("sonar-deep-research.sse"));
    expect(() =>
      client().research.start({
        model: "openrouter:perplexity/sonar-deep-research",
        query,
        tools: ["web_search"],
      }),
    ).toThrow(UnsupportedOptionError);
    expect(seen).toHaveLength(0);
  });

  it("toRef() works and holds no key, but attach() fails with a typed error that explains there is no resume", async () => {
    serve(fixture("sonar-deep-research.sse"));
    const sonde = client();
    const job = sonde.research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    await job.result();
    const ref = job.toRef();
    expect(JSON.stringify(ref)).not.toContain(KEY);
    expect(ref).toMatchObject({ provider: "openrouter", jobId: "gen-1767000000-AbCdEfGhIjKlMnOpQrSt" });
    let thrown: unknown;
    try {
      sonde.research.attach(ref);
    } catch (error) {
      thrown = error;
    }
    expect(UnsupportedOptionError.isInstance(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(/cannot be re-attached.*no resume/);
  });

  it("cancel() is transport-only and says that Perplexity keeps processing and billing", async () => {
    // A stream that stays open after its first chunk, like a long research run.
    const first = sseData(fixture("sonar-deep-research.sse"))[0];
    server.route({ [COMPLETIONS]: sseReply(sseEvent(first), { end: "hang" }) });
    const sonde = client();
    const job = sonde.research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    const events = [];
    for await (const event of job) {
      events.push(event);
      if (event.type === "thinking") {
        const outcome = await job.cancel();
        expect(outcome.outcome).toBe("transport-only");
        expect(outcome.detail).toMatch(/perplexity does not stop on a disconnect.*billed/);
      }
    }
    expect(events.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    const other = await sonde.research.cancel({
      ...job.toRef(),
      model: "openrouter:openai/o4-mini-deep-research",
    });
    expect(other.outcome).toBe("transport-only");
    expect(other.detail).not.toMatch(/perplexity/i);
  });

  for (const name of ["sonar-deep-research.sse", "inline-think-usage-after-finish.sse"]) {
    it(`reasoning.includeThinking false is honoured client-side too (${name}): no thinking events, no reasoning kept in any payload`, async () => {
      const sse = fixture(name);
      const seen = serve(sse);
      const job = client().research.start({
        model: "openrouter:perplexity/sonar-deep-research",
        query,
        reasoning: { includeThinking: false },
      });
      const events = await collect(job);
      expect(seen[0]!.json).toMatchObject({ reasoning: { exclude: true } });
      // The upstream sent its reasoning anyway (the fixture has it): none of it surfaces.
      expect(events.filter((e) => e.type === "thinking")).toEqual([]);
      const kept = JSON.stringify(events);
      for (const thought of ["Searching for the 2025 obligations", "Comparing the Commission"])
        expect(kept).not.toContain(thought);
      expect(kept).not.toContain("reasoning_details");
      const result = await job.result();
      expect(result.status).toBe("completed");
      expect(result.report).toMatch(/^Due-diligence duties/);
      // Reasoning is still billed, and counted.
      expect(result.usage.costSource).toBe("provider");
    });
  }

  it("get() reads the recorded cost of a finished generation, and says when there is none yet", async () => {
    server.use(...handlers({ baseURL: BASE }));
    const sonde = client();
    const job = sonde.research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    await job.result();
    const snapshot = await sonde.research.get(job.toRef());
    expect(snapshot).toMatchObject({
      status: "completed",
      jobId: "gen-mock-0001",
      usage: {
        inputTokens: 12,
        outputTokens: 40,
        internalReasoningTokens: 80,
        costUSD: 0.05,
        costSource: "provider",
      },
    });
    // An edited job id no longer matches the ref's credential tag: drop the tag, as an older ref would have none.
    await expect(
      sonde.research.get({ ...job.toRef(), jobId: "gen-unknown", credential: undefined }),
    ).rejects.toThrow(/no record of this generation.*may still be running/);
  });

  it("get() whose connection fails rejects with a typed SondeError, not a raw fetch error", async () => {
    server.route({ [`GET ${BASE}/generation`]: networkError() });
    const error = await client()
      .research.get({
        v: 1,
        provider: "openrouter",
        model: "openrouter:perplexity/sonar-deep-research",
        jobId: "gen-1767000000-AbCdEfGhIjKlMnOpQrSt",
        createdAt: "2026-01-01T00:00:00.000Z",
        resume: {},
      })
      .catch((e: unknown) => e);
    expect(SondeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ provider: "openrouter" });
  });
});

describe("openrouter: msw handler factory", () => {
  it("streams the configured report and citations in OpenRouter's wire format", async () => {
    server.use(
      ...handlers({
        baseURL: BASE,
        report: "Mocked findings about sodium-ion cells [1], with a longer tail to split into chunks.",
        citations: [{ url: "https://example.net/sodium", title: "Sodium-ion", snippet: "Cells…" }],
        jobId: "gen-fixed",
      }),
    );
    const job = client().research.start({ model: "openrouter:perplexity/sonar-deep-research", query });
    const result = await job.result();
    expect(result.jobId).toBe("gen-fixed");
    expect(result.report).toBe(
      "Mocked findings about sodium-ion cells [1], with a longer tail to split into chunks.",
    );
    expect(result.citations).toEqual([
      {
        url: "https://example.net/sodium",
        title: "Sodium-ion",
        snippet: "Cells…",
        startIndex: result.report.indexOf("[1]"),
        endIndex: result.report.indexOf("[1]") + 3,
      },
    ]);
    expect(result.usage.costUSD).toBe(0.05);
  });

  it("fails the create request as configured", async () => {
    server.use(
      ...handlers({
        baseURL: BASE,
        fail: { status: 401, body: { error: { code: 401, message: "No auth credentials found" } } },
      }),
    );
    const error = await client()
      .research.start({ model: "openrouter:perplexity/sonar-deep-research", query })
      .result()
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/No auth credentials found.*Check the openrouter API key/);
    expect((error as Error).message).not.toContain(KEY);
  });
});
