/**
 * `sonde/tracing` with the real OpenTelemetry SDK and its in-memory exporter: the spans
 * and attributes a user's dashboard relies on, for a streamed job that drops and resumes,
 * a poll-only job, a cancelled job and a failed one. No key ever reaches an attribute.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";
import { sondeTracing } from "../../src/tracing/index.js";
import {
  blocks,
  collect,
  droppedResponse,
  errorResponse,
  eventIdOf,
  eventsAfter,
  fixture,
  fixtureJson,
  KEY as GEMINI_KEY,
  client as geminiClient,
  geminiServer,
  running,
} from "../gemini/helpers.js";
import { startLoopback } from "../helpers/loopback.js";
import { json, sse } from "../helpers/test-server.js";
import { fastRetry, transcript } from "../perplexity/helpers.js";

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const telemetry = sondeTracing({ tracerProvider });

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "bypass" }));
afterEach(() => {
  server.resetHandlers();
  exporter.reset();
  clearMocks();
});
afterAll(() => server.close());

const OPENAI_KEY = "sk-test-tracing-0123456789abcdef";

function onlySpan(): ReadableSpan {
  const spans = exporter.getFinishedSpans();
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

function expectNoSecret(span: ReadableSpan, ...secrets: string[]): void {
  const text = JSON.stringify({ attributes: span.attributes, events: span.events, status: span.status });
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describe("sonde/tracing", () => {
  it("a streamed job that drops and resumes: one invoke_agent span, reconnect and resume events, usage", async () => {
    const research = fixture("research.sse");
    const stored = fixtureJson("research.interaction.json");
    const part = blocks(research).slice(0, 25).join("");
    const { handlers } = geminiServer({
      create: () => droppedResponse(part),
      get: () => json(running(stored)),
      stream: (_call, lastEventId) => sse(eventsAfter(research, lastEventId)),
    });
    server.use(...handlers);
    const client = geminiClient({ telemetry });
    const job = client.research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    await collect(job);
    const result = await job.result();
    const span = onlySpan();
    expect(span.name).toBe("invoke_agent deep-research-preview-04-2026");
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.instrumentationScope.name).toBe("sonde");
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "gcp.gemini",
      "gen_ai.system": "gcp.gemini",
      "gen_ai.request.model": "deep-research-preview-04-2026",
      "gen_ai.response.id": stored.id,
      "sonde.job.id": stored.id,
      "sonde.engine": "gemini",
      "sonde.model": "gemini:deep-research-preview-04-2026",
      "sonde.status": "completed",
      "sonde.reconnects": 1,
      "sonde.resumes": 1,
      "sonde.poll_fallbacks": 0,
      "gen_ai.usage.input_tokens": result.usage.inputTokens,
      "gen_ai.usage.output_tokens":
        result.usage.outputTokens + result.usage.reasoningTokens + result.usage.internalReasoningTokens,
      "sonde.cost_usd": result.usage.costUSD,
      "sonde.cost_source": "estimate",
      "sonde.searches": result.usage.searches,
    });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(span.events.map((e) => e.name)).toEqual(["sonde.reconnect", "sonde.resume"]);
    expect(span.events[1]!.attributes).toEqual({ "sonde.cursor": eventIdOf(blocks(research)[24]!) });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expectNoSecret(span, GEMINI_KEY);
  });

  it("a stream whose resume is refused falls back to polling: a poll_fallback event and count", async () => {
    const research = fixture("research.sse");
    const stored = fixtureJson("research.interaction.json");
    const { handlers } = geminiServer({
      create: () => droppedResponse(blocks(research).slice(0, 25).join("")),
      get: (call) => json(call === 0 ? running(stored) : stored),
      stream: () => errorResponse("error-resume-refused.json", 400),
    });
    server.use(...handlers);
    const client = geminiClient({ telemetry });
    const result = await client.research
      .start({ model: "gemini:deep-research-preview-04-2026", query: "q" })
      .result();
    expect(result.status).toBe("completed");
    const span = onlySpan();
    expect(span.attributes).toMatchObject({
      "sonde.status": "completed",
      "sonde.poll_fallbacks": 1,
      "sonde.reconnects": 1,
    });
    expect(span.events.map((e) => e.name)).toContain("sonde.poll_fallback");
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a poll-only job: one span, the provider's charge as its cost, no fallback", async () => {
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    let polls = 0;
    const loop = await startLoopback((request, response) => {
      const body =
        request.method === "POST"
          ? exchanges[0]!.response.body
          : polls++ === 0
            ? exchanges[1]!.response.body
            : exchanges[2]!.response.body;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    });
    try {
      const hostedKey = "hosted-key-tracing-0123456789";
      const client = new Sonde({
        hosted: { apiKey: hostedKey, baseURL: loop.url },
        retry: fastRetry,
        env: {},
        telemetry,
      });
      await client.research.start({ model: "hosted:agents.deep_research", query: "q" }).result();
      const span = onlySpan();
      expect(span.name).toBe("invoke_agent agents.deep_research");
      expect(span.attributes).toMatchObject({
        "gen_ai.provider.name": "sonde.hosted",
        "sonde.poll_only": true,
        "sonde.status": "completed",
        "sonde.cost_usd": 4.12,
        "sonde.cost_source": "provider",
        "sonde.poll_fallbacks": 0,
        "sonde.reconnects": 0,
      });
      expect(span.events).toEqual([]);
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      expectNoSecret(span, hostedKey);
    } finally {
      await loop.close();
    }
  });

  it("a cancelled job: a cancel event with its outcome, status cancelled, not an error", async () => {
    // Long enough (about 2 s of mock work) that the cancel wins on a loaded machine too.
    mockResearch("word ".repeat(2000), { delayMs: 2, chunkSize: 10 }).always().register();
    const client = new Sonde({ openai: { apiKey: OPENAI_KEY }, env: {}, telemetry });
    const job = client.research.start({ model: "openai:gpt-5.5-pro", query: "q" });
    for await (const event of job) if (event.type === "text") await job.cancel();
    const span = onlySpan();
    expect(span.attributes).toMatchObject({ "sonde.status": "cancelled", "sonde.job.id": job.id });
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      ["sonde.cancel", { "sonde.cancel.by": "user", "sonde.cancel.outcome": "cancelled" }],
    ]);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a job stopped at its spend cap: cancel by cost-cap and the cap as span events, status incomplete", async () => {
    mockResearch("word ".repeat(800), { delayMs: 10 }).always().register();
    const client = new Sonde({ env: {}, telemetry });
    const result = await client.research
      .start({ model: "gemini:deep-research-preview-04-2026", query: "q", budget: { maxCostUSD: 0.001 } })
      .result();
    expect(result.status).toBe("incomplete");
    const span = onlySpan();
    expect(span.attributes).toMatchObject({
      "sonde.status": "incomplete",
      "sonde.budget.max_cost_usd": 0.001,
      "sonde.cost_source": "estimate",
    });
    expect(span.attributes["sonde.cost_usd"]).toBeGreaterThanOrEqual(0.001);
    expect(span.events.map((e) => [e.name, e.attributes?.["sonde.cancel.by"]])).toEqual([
      ["sonde.cancel", "cost-cap"],
      ["sonde.cost_cap", undefined],
    ]);
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a failed job: status ERROR, error.type, an error and an exception event, the key scrubbed", async () => {
    mockResearch("", { fail: { code: "server_error", message: `upstream rejected key ${OPENAI_KEY}` } })
      .always()
      .register();
    const client = new Sonde({ openai: { apiKey: OPENAI_KEY }, env: {}, telemetry });
    const error = await client.research
      .start({ model: "openai:gpt-5.5-pro", query: "q" })
      .result()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const span = onlySpan();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.status.message).toMatch(/upstream rejected key \[redacted\]/);
    expect(span.attributes).toMatchObject({ "sonde.status": "failed", "error.type": "job_failed" });
    expect(span.events.map((e) => e.name)).toEqual(["sonde.error", "exception"]);
    expectNoSecret(span, OPENAI_KEY);
  });

  it("a job that is never consumed opens no span; its span starts when it first runs and ends with it", async () => {
    mockResearch("later").always().register();
    const started: string[] = [];
    const counting = sondeTracing({
      tracer: {
        ...tracerProvider.getTracer("sonde"),
        startSpan: (name, options, context) => {
          started.push(name);
          return tracerProvider.getTracer("sonde").startSpan(name, options, context);
        },
      } as ReturnType<typeof tracerProvider.getTracer>,
    });
    const client = new Sonde({ openai: { apiKey: OPENAI_KEY }, env: {}, telemetry: counting });
    const idle = client.research.start({ model: "openai:gpt-5.5-pro", query: "never run" });
    const job = client.research.start({ model: "openai:gpt-5.5-pro", query: "run" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).toEqual([]); // before: a span per start(), left open by the idle job
    await job.result();
    expect(started).toHaveLength(1);
    expect(onlySpan().attributes).toMatchObject({ "sonde.status": "completed" });
    expect(idle.status).toBe("queued");
  });

  // The README's "handler that only needs the ref": await created(), take the ref, abort.
  it("a job aborted after created() with nobody iterating ends its span at once, once", async () => {
    mockResearch("word ".repeat(400), { delayMs: 5 }).always().register();
    const ends: string[] = [];
    const client = new Sonde({
      openai: { apiKey: OPENAI_KEY },
      env: {},
      telemetry: {
        observeJob: (description) => {
          const span = telemetry.observeJob(description);
          return (signal) => {
            if (signal.type === "end") ends.push(signal.status);
            span?.(signal);
          };
        },
      },
    });
    const job = client.research.start({ model: "openai:gpt-5.5-pro", query: "q" });
    await job.created();
    job.toRef();
    job.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const span = onlySpan();
    expect(span.attributes).toMatchObject({ "sonde.status": "aborted", "sonde.job.id": job.id });
    expect(span.events.map((e) => e.name)).toEqual(["sonde.aborted"]);
    // Whatever runs later sees the same abort, and the job object does not end a second time.
    await expect(job.result()).rejects.toMatchObject({ code: "aborted", jobState: "remote" });
    expect(ends).toEqual(["aborted"]);
  });

  it("a client without telemetry records nothing, and the core never imports the tracing entry", async () => {
    mockResearch("quiet").always().register();
    await new Sonde({ openai: { apiKey: OPENAI_KEY }, env: {} }).research
      .start({ model: "openai:gpt-5.5-pro", query: "q" })
      .result();
    expect(exporter.getFinishedSpans()).toEqual([]);
    const root = new URL("../../src/", import.meta.url).pathname;
    const sources = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) return name === "tracing" ? [] : sources(path);
        return path.endsWith(".ts") ? [path] : [];
      });
    for (const file of sources(root)) {
      const text = readFileSync(file, "utf8");
      expect(text, file).not.toMatch(/from "@opentelemetry\/|tracing\/index\.js"/);
    }
  });
});
