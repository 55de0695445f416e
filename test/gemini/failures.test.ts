/**
 * The known failure modes of long Deep Research runs (providers/gemini/WIRE.md §8, §9), each over msw with the
 * fixture transcripts: drops and resume, a refused or hanging resume, in-stream errors,
 * a stream that ends without completion, and create errors.
 */
import { describe, expect, it } from "vitest";
import {
  IndeterminateSubmissionError,
  InvalidRequestError,
  JobAbortedError,
  ProviderJobError,
  RateLimitError,
} from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import { FINAL_CURSOR } from "../../src/transport/final-cursor.js";
import { createTestServer, json, networkError, sse } from "../helpers/test-server.js";
import {
  blocks,
  client,
  collect,
  droppedResponse,
  errorResponse,
  eventIdOf,
  eventsAfter,
  fixture,
  fixtureJson,
  geminiServer,
  reportOf,
  running,
} from "./helpers.js";

const server = createTestServer();

const research = fixture("research.sse");
const stored = fixtureJson("research.interaction.json");
const model = "gemini:deep-research-preview-04-2026";

/** The first `n` events of a transcript. */
const head = (transcript: string, n: number) => blocks(transcript).slice(0, n).join("");

async function baseline(): Promise<ResearchEvent[]> {
  server.use(...geminiServer({ create: () => sse(research) }).handlers);
  const events = await collect(client().research.start({ model, query: "q" }));
  server.reset();
  return events;
}

const strip = (events: ResearchEvent[]) => events.map(({ seq: _seq, ...rest }) => rest);

describe("gemini: drops and resume", () => {
  it("a drop mid-report: GET shows the interaction running, the stream resumes with last_event_id, and every event arrives once", async () => {
    const expected = await baseline();
    const cutAt = 27; // inside the model_output text deltas
    const { handlers, requests } = geminiServer({
      create: () => droppedResponse(head(research, cutAt)),
      get: () => json(running(stored)),
      stream: (_call, lastEventId) => sse(eventsAfter(research, lastEventId)),
    });
    server.use(...handlers);
    const events = await collect(client().research.start({ model, query: "q" }));

    const resumes = requests.filter((r) => r.url.searchParams.get("stream") === "true");
    expect(resumes).toHaveLength(1);
    expect(resumes[0]!.url.searchParams.get("last_event_id")).toBe(eventIdOf(blocks(research)[cutAt - 1]!));
    // The official pattern: look at the interaction before reconnecting.
    expect(requests.map((r) => `${r.method} ${r.url.searchParams.get("stream") ?? ""}`)).toEqual([
      "POST ",
      "GET ",
      "GET true",
    ]);
    expect(strip(events)).toEqual(strip(expected));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
  });

  it("a resumed stream that repeats events before the cursor: duplicates are dropped", async () => {
    const expected = await baseline();
    const { handlers } = geminiServer({
      create: () => droppedResponse(head(research, 24)),
      get: () => json(running(stored)),
      // Replays from a few events too early, as some servers do.
      stream: () => sse(blocks(research).slice(20).join("")),
    });
    server.use(...handlers);
    const events = await collect(client().research.start({ model, query: "q" }));
    expect(reportOf(events)).toBe(reportOf(expected));
    expect(strip(events)).toEqual(strip(expected));
  });

  it("a drop after the job finished: the stored interaction supplies the rest of the report, nothing twice", async () => {
    const expected = await baseline();
    const { handlers, requests } = geminiServer({
      create: () => droppedResponse(head(research, 26)),
      get: () => json(stored),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events = await collect(job);
    expect(requests.some((r) => r.url.searchParams.get("stream") === "true")).toBe(false);
    expect(reportOf(events)).toBe(reportOf(expected));
    const result = await job.result();
    const full = await (async () => {
      server.use(...geminiServer({ create: () => sse(research) }).handlers);
      return client().research.start({ model, query: "q" }).result();
    })();
    expect(result.report).toBe(full.report);
    expect(result.citations).toEqual(full.citations);
    expect(result.usage).toEqual(full.usage);
    expect(result.status).toBe("completed");
    expect(new Set(events.map((e) => e.seq)).size).toBe(events.length);
  });

  it("resume refused (400 on last_event_id): polls GET with backoff until the interaction ends; the report is whole", async () => {
    const expected = await baseline();
    const { handlers, requests } = geminiServer({
      create: () => droppedResponse(head(research, 25)),
      get: (call) => json(call < 3 ? running(stored) : stored),
      stream: () => errorResponse("error-resume-refused.json", 400),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events = await collect(job);
    expect(requests.filter((r) => r.url.searchParams.get("stream") === "true")).toHaveLength(1);
    expect(requests.filter((r) => r.method === "GET" && !r.url.searchParams.has("stream"))).toHaveLength(4);
    // Each poll that finds the interaction running is a status heartbeat.
    // The last streamed text (the stored result's events carry FINAL_CURSOR).
    const lastText = events.findLastIndex(
      (e) => e.type === "text" && e.cursor !== undefined && e.cursor !== FINAL_CURSOR,
    );
    expect(events.slice(lastText).filter((e) => e.type === "status" && e.status === "running")).toHaveLength(
      2,
    );
    expect(reportOf(events)).toBe(reportOf(expected));
    expect((await job.result()).citations).toHaveLength(4);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("a resume that brings nothing new twice (the stream hangs or closes at once) switches to polling", async () => {
    const expected = await baseline();
    const { handlers, requests } = geminiServer({
      create: () => droppedResponse(head(research, 25)),
      get: (call) => json(call < 4 ? running(stored) : stored),
      // A known Deep Research failure: the resumed stream replays old lifecycle events and stops.
      stream: () => sse(blocks(research).slice(0, 2).join("")),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events = await collect(job);
    expect(requests.filter((r) => r.url.searchParams.get("stream") === "true")).toHaveLength(2);
    expect(reportOf(events)).toBe(reportOf(expected));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("deltas without an event_id (seen on real Deep Research streams) are not delivered twice when a resume replays them", async () => {
    const expected = await baseline();
    // Strip the event_id of the second and fourth text deltas, as in the real stream of G11.
    const all = blocks(research);
    const textAt = all.findIndex((block) => block.includes('"type":"text"}'));
    const sparse = all.map((block, i) =>
      i === textAt + 1 || i === textAt + 3 ? block.replace(/"event_id":"[^"]+",/, "") : block,
    );
    const transcript = sparse.join("");
    const { handlers, requests } = geminiServer({
      // Cut right after the first id-less delta: the resume replays it after the last real id.
      create: () => droppedResponse(sparse.slice(0, textAt + 2).join("")),
      get: () => json(running(stored)),
      stream: (_call, lastEventId) => sse(eventsAfter(transcript, lastEventId)),
    });
    server.use(...handlers);
    const events = await collect(client().research.start({ model, query: "q" }));
    const resume = requests.find((r) => r.url.searchParams.get("stream") === "true")!;
    expect(resume.url.searchParams.get("last_event_id")).toBe(eventIdOf(all[textAt]!));
    expect(reportOf(events)).toBe(reportOf(expected));
    expect(events.filter((e) => e.type === "text")).toHaveLength(
      expected.filter((e) => e.type === "text").length,
    );
  });

  it("the 10-minute mark: an error array written into the event stream before the connection closes is a drop, resumed", async () => {
    const expected = await baseline();
    // As reported on discuss.ai.google.dev (G11): plain JSON text in the stream, then the end.
    const junk =
      '[{\n"error": {\n"code": 503,\n"message": "The service is currently unavailable.",\n"status": "UNAVAILABLE"\n}\n}\n]\n';
    const { handlers } = geminiServer({
      create: () => sse(blocks(research).slice(0, 20).join("") + junk),
      get: () => json(running(stored)),
      stream: (_call, lastEventId) => sse(eventsAfter(research, lastEventId)),
    });
    server.use(...handlers);
    const events = await collect(client().research.start({ model, query: "q" }));
    expect(strip(events)).toEqual(strip(expected));
  });

  it("the start POST is never repeated after a reset before the interaction id arrived", async () => {
    const { handlers, requests } = geminiServer({
      create: () => droppedResponse(research.slice(0, 60)),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events = await collect(job);
    const error = await job.result().catch((e) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/did not resend/);
    expect(requests).toHaveLength(1);
    expect(events.at(-2)).toMatchObject({
      type: "error",
      error: { code: "indeterminate_submission", retryable: false },
    });
  });

  it("the start POST is never repeated after a reset before any answer (no status line came back)", async () => {
    const { handlers, requests } = geminiServer({ create: () => networkError() });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events = await collect(job);
    const error = await job.result().catch((e) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/did not resend/);
    expect(requests.filter((r) => r.method === "POST")).toHaveLength(1);
    expect(events.map((e) => e.type)).toEqual(["error", "done"]);
    expect(events[0]).toMatchObject({ error: { code: "indeterminate_submission", retryable: false } });
  });
});

describe("gemini: errors and endings", () => {
  it("an error event (deadline exceeded) ends the job failed with the matching typed error; the partial report and usage are kept", async () => {
    const { handlers, requests } = geminiServer({
      create: () => sse(fixture("deadline-error.sse")),
      get: () => json(fixtureJson("deadline-error.interaction.json")),
    });
    server.use(...handlers);
    const job = client().research.start({ model: "gemini:deep-research-max-preview-04-2026", query: "q" });
    const events = await collect(job);
    // After an error event the interaction is read, as the API reference says.
    expect(requests.map((r) => r.method)).toEqual(["POST", "GET"]);
    expect(events.slice(-3).map((e) => e.type)).toEqual(["error", "status", "done"]);
    expect(events.at(-3)).toMatchObject({
      type: "error",
      error: { code: "deadline_exceeded", retryable: false },
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });
    const error = await job.result().catch((e) => e);
    expect(ProviderJobError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "job_failed", providerCode: "deadline_exceeded" });
    expect(error.message).toMatch(/time limit.*60 minutes.*previousJobId/);
    expect(error.partial.report).toBe(
      "Partial findings: grid-scale storage tenders doubled in 2025 (日本: 系統用蓄電池 ⚡).",
    );
    expect(error.partial.usage).toMatchObject({ searches: 161, reasoningTokens: 4_000 });
  });

  it("an error event is typed even when the interaction cannot be read afterwards", async () => {
    const { handlers } = geminiServer({
      create: () => sse(fixture("deadline-error.sse")),
      get: () => errorResponse("error-429.json", 429),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const error = await job.result().catch((e) => e);
    expect(ProviderJobError.isInstance(error) && error.providerCode).toBe("deadline_exceeded");
  });

  it("an error event while the interaction is still running is a dropped stream: it resumes", async () => {
    const expected = await baseline();
    const blocksOf = blocks(research);
    const transient =
      'event: error\ndata: {"error":{"code":"unavailable","message":"Stream interrupted."},"event_type":"error"}\n\n';
    const { handlers } = geminiServer({
      create: () => sse(blocksOf.slice(0, 26).join("") + transient),
      get: () => json(running(stored)),
      stream: (_call, lastEventId) => sse(eventsAfter(research, lastEventId)),
    });
    server.use(...handlers);
    const events = await collect(client().research.start({ model, query: "q" }));
    expect(strip(events)).toEqual(strip(expected));
  });

  it("a stream that ends without interaction.completed is not success: the interaction's own status decides", async () => {
    const { handlers } = geminiServer({
      create: () => sse(fixture("truncated.sse")),
      get: () => json(fixtureJson("truncated.failed.interaction.json")),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events = await collect(job);
    expect(events.some((e) => e.type === "status" && e.status === "completed")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });
    const error = await job.result().catch((e) => e);
    expect(error).toMatchObject({ code: "job_failed", providerCode: "internal" });
    expect(error.partial.report).toBe("Heat-pump sales in Europe fell in 2024 and recovered in 2025");
  });

  it("a stream that ends early while the interaction never finishes does not turn into a completed job", async () => {
    const { handlers } = geminiServer({
      create: () => sse(fixture("truncated.sse")),
      get: () => json(running(fixtureJson("truncated.failed.interaction.json"))),
      stream: () => sse(""),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q", timeoutMs: 400 });
    const error = await job.result().catch((e) => e);
    expect(JobAbortedError.isInstance(error)).toBe(true);
    expect(error.code).toBe("timeout");
    expect(job.status).not.toBe("completed");
  });

  it("a 429 on create is retried (the job was certainly not created), honouring Google's retryDelay", async () => {
    const { handlers, requests } = geminiServer({
      create: (call) => (call === 0 ? errorResponse("error-429.json", 429) : sse(research)),
    });
    server.use(...handlers);
    const started = performance.now();
    // Google's 50 ms is within retry.maxDelayMs: waited out, then the create is resent once.
    const result = await client({ retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 100 } })
      .research.start({ model, query: "q" })
      .result();
    expect(result.status).toBe("completed");
    expect(requests.filter((r) => r.method === "POST")).toHaveLength(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45); // retryDelay "0.05s"
  });

  it("a 429 that outlasts the retry budget is a RateLimitError with Google's retry hint", async () => {
    server.use(...geminiServer({ create: () => errorResponse("error-429.json", 429) }).handlers);
    const error = await client()
      .research.start({ model, query: "q" })
      .result()
      .catch((e) => e);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect(error.retryAfterMs).toBe(50);
    expect(error.message).toContain("Resource has been exhausted");
  });

  it("a 400 on create is an InvalidRequestError with Google's message and status, never retried", async () => {
    const { handlers, requests } = geminiServer({ create: () => errorResponse("error-400.json", 400) });
    server.use(...handlers);
    const error = await client()
      .research.start({ model, query: "q" })
      .result()
      .catch((e) => e);
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "invalid_request", providerCode: "invalid_argument" });
    expect(error.status).toBe(400);
    expect(error.message).toContain("agent_config.thinking_summaries");
    expect(requests).toHaveLength(1);
  });
});
