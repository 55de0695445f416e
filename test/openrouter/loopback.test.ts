/**
 * OpenRouter over real sockets: drops, keepalives and the idle watchdog, and memory
 * during a long reasoning phase. The server counts requests: a dropped stream must
 * never be followed by a second POST (it would start and bill a second run).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { IndeterminateSubmissionError, Sonde, StreamInterruptedError, type Usage } from "../../src/index.js";
import { type Loopback, startLoopback, writeThenCut } from "../helpers/loopback.js";
import { sseData, sseEvent } from "../helpers/sse.js";
import { collect, fastRetry, fixture, KEY } from "./helpers.js";

const sse = { "content-type": "text/event-stream", "x-generation-id": "gen-1767000000-AbCdEfGhIjKlMnOpQrSt" };
const model = "openrouter:perplexity/sonar-deep-research";
const query = "What changed in EU battery regulation in 2025?";
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const client = (baseURL: string, idleTimeoutMs = 2_000) =>
  new Sonde({ openrouter: { apiKey: KEY, baseURL }, retry: fastRetry, idleTimeoutMs, env: {} });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The fixture up to (not including) its `n`-th data line. */
function firstDataLines(n: number): string {
  const lines = fixture("sonar-deep-research.sse").split("\n\n");
  let seen = 0;
  const kept: string[] = [];
  for (const frame of lines) {
    if (frame.startsWith("data: ") && ++seen > n) break;
    kept.push(frame);
  }
  return `${kept.join("\n\n")}\n\n`;
}

describe("openrouter over a real socket", () => {
  it("a dropped stream ends the job: error retryable:false, done incomplete, partial result kept, and exactly one POST", async () => {
    server = await startLoopback((_request, response) => {
      writeThenCut(response, sse, Buffer.from(firstDataLines(3)));
    });
    const job = client(server.url).research.start({ model, query });
    const events = await collect(job);
    expect(events.slice(-2)).toMatchObject([
      { type: "error", error: { code: "stream_interrupted", retryable: false } },
      { type: "done", status: "incomplete" },
    ]);
    expect(new Set(events.map((e) => e.seq)).size).toBe(events.length);
    const error = await job.result().catch((e: unknown) => e);
    expect(StreamInterruptedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/did not resend/);
    const partial = (
      error as StreamInterruptedError & { partial: { report: string; citations: unknown[]; status: string } }
    ).partial;
    expect(partial.report).toBe("Due-diligence duties were postponed to 2027");
    expect(partial.citations).toHaveLength(2);
    expect(partial.status).toBe("incomplete");
    await sleep(50); // anything the client would resend has had time to arrive
    expect(server.requests.map((r) => r.method)).toEqual(["POST"]);
  });

  it("a dropped stream keeps a labelled cost estimate (usage event before the error, in partial.usage), and get(ref) then reads the real charge from the generation endpoint", async () => {
    const generation = fixture("generation-after-drop.json");
    server = await startLoopback((request, response) => {
      if (request.method === "GET" && request.url.startsWith("/generation?")) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(generation);
        return;
      }
      writeThenCut(response, sse, Buffer.from(firstDataLines(3)));
    });
    const sonde = client(server.url);
    const job = sonde.research.start({ model, query });
    const events = await collect(job);
    expect(events.slice(-3).map((e) => e.type)).toEqual(["usage", "error", "done"]);
    const usage = events.at(-3)!.type === "usage" ? (events.at(-3) as { usage: Usage }).usage : undefined;
    // ~4 characters a token over what was sent and received, at the catalog's $2 in / $8 out / $3 reasoning per M.
    const received = {
      prompt: query.length,
      text: "Due-diligence duties were postponed to 2027".length,
      reasoning:
        "Searching for the 2025 obligations of Regulation 2023/1542. Two sources agree on a 2027 postponement."
          .length,
    };
    const tokens = (chars: number) => Math.ceil(chars / 4);
    expect(usage).toEqual({
      inputTokens: tokens(received.prompt),
      outputTokens: tokens(received.text),
      reasoningTokens: 0,
      internalReasoningTokens: tokens(received.reasoning),
      searches: 0,
      fetches: 0,
      modelCalls: 1,
      costUSD:
        Math.round(
          (tokens(received.prompt) * 2 + tokens(received.text) * 8 + tokens(received.reasoning) * 3) * 1e6,
        ) / 1e12,
      costSource: "estimate",
    });
    expect(usage!.costUSD).toBeGreaterThan(0);
    // An estimate made by Sonde has no provider payload behind it.
    expect(events.at(-3)!.rawEvent).toBeNull();
    const error = (await job.result().catch((e: unknown) => e)) as StreamInterruptedError & {
      partial: { usage: Usage };
    };
    expect(StreamInterruptedError.isInstance(error)).toBe(true);
    expect(error.partial.usage).toEqual(usage);
    expect(error.message).toMatch(
      /estimate.*research\.get\(job\.toRef\(\)\) reads the provider's real charge/,
    );

    // What the message promises: the generation endpoint has the real charge.
    const snapshot = await sonde.research.get(job.toRef());
    expect(server.requests.at(-1)!.url).toBe("/generation?id=gen-1767000000-AbCdEfGhIjKlMnOpQrSt");
    expect(snapshot.usage).toMatchObject({
      costUSD: 0.41,
      costSource: "provider",
      inputTokens: 21,
      internalReasoningTokens: 1210,
    });
    expect(server.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });

  it("a drop during the keepalive phase (before any chunk, no generation id known) is not retried either", async () => {
    server = await startLoopback((_request, response) => {
      // Without X-Generation-Id nothing identifies the run yet; it was still accepted (200).
      writeThenCut(
        response,
        { "content-type": "text/event-stream" },
        Buffer.from(": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n"),
      );
    });
    const job = client(server.url).research.start({ model, query });
    const events = await collect(job);
    // The run was accepted and may bill: its estimate covers the prompt (and any per-request fee).
    expect(events.map((e) => e.type)).toEqual(["usage", "error", "done"]);
    expect(events[0]).toMatchObject({
      usage: { inputTokens: Math.ceil(query.length / 4), costSource: "estimate" },
    });
    expect(events[1]).toMatchObject({ error: { retryable: false } });
    expect((events[1] as { error: { message: string } }).error.message).toMatch(/no generation id/);
    await expect(job.result()).rejects.toSatisfy((e) => StreamInterruptedError.isInstance(e));
    await sleep(50);
    expect(server.requests).toHaveLength(1);
  });

  it("keepalive comments keep a quiet stream alive past the idle timeout; silence ends it", async () => {
    const [first, ...rest] = fixture("sonar-deep-research.sse")
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: "));
    server = await startLoopback(async (request, response, call) => {
      response.writeHead(200, sse);
      response.write(`${first}\n\n`);
      if (call === 0) {
        // 750 ms of keepalives every 25 ms against a 400 ms idle limit, then the rest.
        for (let i = 0; i < 30; i++) {
          await sleep(25);
          response.write(": OPENROUTER PROCESSING\n\n");
        }
        response.end(`${rest.join("\n\n")}\n\n`);
      }
      // call 1: silence after the first chunk
      void request;
    });
    const kept = await client(server.url, 400).research.start({ model, query }).result();
    expect(kept.status).toBe("completed");

    const silent = client(server.url, 400).research.start({ model, query });
    const events = await collect(silent);
    expect(events.at(-2)).toMatchObject({
      type: "error",
      error: { code: "stream_interrupted", retryable: false },
    });
    expect((events.at(-2) as { error: { message: string } }).error.message).toMatch(/no data for 400 ms/);
    expect(server.requests).toHaveLength(2); // one per job
  });

  it("a POST that gets no response headers is IndeterminateSubmissionError and is never resent", async () => {
    server = await startLoopback(() => {
      // accept the request, never answer
    });
    const job = client(server.url, 150).research.start({ model, query });
    const error = await job.result().catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/did not resend it/);
    await sleep(50);
    expect(server.requests).toHaveLength(1);
  });

  it("memory stays flat while hundreds of thousands of reasoning tokens stream", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const chunks = 12_000;
    const piece = "x".repeat(2_000); // ~24 MB of reasoning in total
    const envelope = sseData(fixture("sonar-deep-research.sse"))[0] as Record<string, unknown>;
    const reasoningChunk = sseEvent({
      ...envelope,
      choices: [
        { index: 0, delta: { role: "assistant", content: "", reasoning: piece }, finish_reason: null },
      ],
    });
    server = await startLoopback(async (_request, response) => {
      response.writeHead(200, sse);
      for (let i = 0; i < chunks; i++) {
        if (!response.write(reasoningChunk)) await new Promise((resolve) => response.once("drain", resolve));
        if (i % 500 === 0) response.write(": OPENROUTER PROCESSING\n\n");
      }
      const tail = fixture("sonar-deep-research.sse")
        .split("\n\n")
        .filter((frame) => frame.startsWith("data: "))
        .slice(2);
      response.end(`${tail.join("\n\n")}\n\n`);
    });
    const job = client(server.url).research.start({ model, query });
    let thinking = 0;
    const heap: number[] = [];
    for await (const event of job) {
      if (event.type !== "thinking") continue;
      thinking += event.delta.length;
      if (thinking === 2_000 * 2_000 || thinking === 2_000 * 11_000) {
        gc();
        heap.push(process.memoryUsage().heapUsed);
      }
    }
    expect(thinking).toBe(chunks * 2_000);
    expect(heap).toHaveLength(2);
    // 18 MB of reasoning passed between the two samples; retaining it would show.
    expect(heap[1]! - heap[0]!).toBeLessThan(6_000_000);
    expect((await job.result()).report).toBe("Due-diligence duties were postponed to 2027[1][2].");
  });
});
