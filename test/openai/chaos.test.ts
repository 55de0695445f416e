/**
 * The OpenAI engine against a real HTTP server on 127.0.0.1 that misbehaves the way
 * networks do: connections cut at arbitrary bytes (inside a UTF-8 character, inside an
 * SSE line), 5xx on reconnect, silence, streams that end early, refused resumes, and a
 * process that restarts and re-attaches from a JSON ref.
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IndeterminateSubmissionError, JobAbortedError } from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";
import type { JobRef } from "../../src/ref.js";
import { FINAL_CURSOR } from "../../src/transport/final-cursor.js";
import { type Loopback, type RecordedRequest, startLoopback, writeThenCut } from "../helpers/loopback.js";
import { cutReadBothWays } from "../helpers/read-both-ways.js";
import {
  collect,
  expectSeqStrictlyIncreasing,
  fixture,
  KEY,
  makeClient,
  STREAMING_MODEL,
  textOf,
} from "./helpers.js";
import { lastCompleteEvent, longTranscript, prng, RESPONSE_ID, resumeBytes } from "./transcript.js";

const transcript = longTranscript({ seed: 7, deltas: 3000 });
const SSE_HEAD = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

/** What the server does with one connection. */
type Step =
  | {
      kind: "stream";
      cutAt?: number;
      endAt?: number;
      silentAt?: number;
      keepaliveAt?: { at: number; forMs: number };
    }
  | { kind: "status"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "reset" }
  | { kind: "poll"; body: unknown };

let plan: (request: RecordedRequest, index: number) => Step = () => ({ kind: "stream" });
let loop: Loopback;
let runStart = 0;

beforeAll(async () => {
  loop = await startLoopback(async (request, response, call) => serve(request, response, call - runStart));
});
afterAll(() => loop.close());

async function serve(request: RecordedRequest, response: ServerResponse, index: number): Promise<void> {
  const step = plan(request, index);
  const url = new URL(request.url, loop.url);
  if (step.kind === "reset") {
    response.socket?.destroy();
    return;
  }
  if (step.kind === "status") {
    response.writeHead(step.status, { "content-type": "application/json", ...step.headers });
    response.end(JSON.stringify(step.body));
    return;
  }
  if (step.kind === "poll") {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(step.body));
    return;
  }
  const after = url.searchParams.get("starting_after");
  const bytes =
    request.method === "POST"
      ? transcript.bytes
      : resumeBytes(transcript, after === null ? undefined : Number(after));
  if (step.cutAt !== undefined) return writeThenCut(response, SSE_HEAD, bytes.subarray(0, step.cutAt));
  response.writeHead(200, SSE_HEAD);
  response.flushHeaders();
  if (step.endAt !== undefined) {
    response.end(bytes.subarray(0, step.endAt));
    return;
  }
  if (step.silentAt !== undefined) {
    // Then nothing at all, not even a keepalive, until the client gives up.
    response.write(bytes.subarray(0, step.silentAt));
    return;
  }
  if (step.keepaliveAt) {
    response.write(bytes.subarray(0, step.keepaliveAt.at));
    const until = Date.now() + step.keepaliveAt.forMs;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 40));
      response.write(": keepalive\n\n");
    }
    response.end(bytes.subarray(step.keepaliveAt.at));
    return;
  }
  response.end(bytes);
}

function newRun(next: typeof plan): RecordedRequest[] {
  runStart = loop.requests.length;
  plan = next;
  return loop.requests.slice(runStart);
}
const requestsOfRun = () => loop.requests.slice(runStart);
const describeRequest = (r: RecordedRequest) => `${r.method} ${r.url}`;

function clientFor(options: Parameters<typeof makeClient>[0] = {}) {
  return makeClient({ openai: { apiKey: KEY, baseURL: `${loop.url}/v1` }, idleTimeoutMs: 5_000, ...options });
}

const start = (client = clientFor()) =>
  client.research.start({ model: STREAMING_MODEL, query: "battery rules" });
const strip = (events: ResearchEvent[]) => events.map(({ seq: _seq, ...rest }) => rest);

let baseline: { events: ResearchEvent[]; result: Awaited<ReturnType<ResearchJob["result"]>> };

describe("chaos: cut connections resume to the same report", () => {
  beforeAll(async () => {
    newRun(() => ({ kind: "stream" }));
    const job = start();
    const events = await collect(job);
    baseline = { events, result: await job.result() };
  });

  it("the uninterrupted run is what the transcript says", () => {
    // The transcript numbers events with gaps, as the server may: only increase is assumed.
    const numbers = transcript.events.map((e) => e.sequence_number as number);
    expect(numbers.some((n, i) => i > 0 && n - numbers[i - 1]! > 1)).toBe(true);
    expect(baseline.result.report).toBe(transcript.report);
    expect(baseline.result.status).toBe("completed");
    expect(baseline.events.filter((e) => e.type === "text").length).toBeGreaterThanOrEqual(3000);
    expect(baseline.result.citations.length).toBe(12);
    expect(baseline.result.usage).toMatchObject({ searches: 12, inputTokens: 60506, outputTokens: 2467 });
    for (const event of baseline.events.filter((e) => e.type === "citation")) {
      const { startIndex, endIndex, url } = event.citation;
      expect(transcript.report.slice(startIndex, endIndex)).toBe(`([${new URL(url).host}](${url}))`);
    }
  });

  // Deliberate offsets: inside a 4-byte emoji, inside a 3-byte CJK character, inside the
  // `data: ` prefix, between the two newlines that end an event, and exactly on a boundary.
  const special = (() => {
    const bytes = transcript.bytes;
    const firstEnd = transcript.ends[0]!;
    const inside = (needle: string, into: number) =>
      bytes.indexOf(Buffer.from(needle), firstEnd + 5000) + into;
    return [
      { why: "inside a 4-byte emoji", at: inside("🔋", 2) },
      { why: "inside a 3-byte CJK character", at: inside("電池規則", 1) },
      { why: "inside a ZWJ sequence", at: inside("👨‍👩‍👧", 5) },
      { why: "inside the data: prefix", at: bytes.indexOf("\ndata: ", firstEnd + 20000) + 3 },
      { why: "between an event's two newlines", at: transcript.ends[400]! - 1 },
      { why: "exactly on an event boundary", at: transcript.ends[1200]! },
      { why: "inside the final response.completed", at: transcript.ends.at(-2)! + 500 },
    ];
  })();
  const random = prng(20260723);
  const seeded = Array.from({ length: 50 }, (_, i) => ({
    why: `seeded #${i}`,
    // After the first event: before the response id, a cut is an indeterminate submission (tested below).
    at: transcript.ends[0]! + Math.floor(random() * (transcript.bytes.length - transcript.ends[0]! - 1)),
  }));

  it("the deliberate cut points are where they claim to be", () => {
    const continuation = (at: number) => (transcript.bytes[at]! & 0xc0) === 0x80;
    expect(continuation(special[0]!.at)).toBe(true);
    expect(continuation(special[1]!.at)).toBe(true);
    expect(transcript.bytes.subarray(special[3]!.at - 3, special[3]!.at).toString()).toBe("\nda");
    expect(transcript.bytes.subarray(special[4]!.at - 1, special[4]!.at + 1).toString()).toBe("\n\n");
  });

  it.each([...special, ...seeded])(
    "cut $why (byte $at): same report, citations, usage; no seq twice",
    async ({ at }) => {
      newRun((_, index) => (index === 0 ? { kind: "stream", cutAt: at } : { kind: "stream" }));
      const job = start();
      const events = await collect(job);
      const result = await job.result();

      expect(result.report).toBe(baseline.result.report);
      expect(result.citations).toEqual(baseline.result.citations);
      expect(result.usage).toEqual(baseline.result.usage);
      expectSeqStrictlyIncreasing(events);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
      // Exactly the uninterrupted events, in order: nothing lost, nothing twice.
      expect(strip(events)).toEqual(strip(baseline.events));

      const requests = requestsOfRun();
      expect(requests.filter((r) => r.method === "POST")).toHaveLength(1);
      expect(requests).toHaveLength(2);
      const resumedAfter = transcript.events[lastCompleteEvent(transcript, at)]!.sequence_number;
      expect(describeRequest(requests[1]!)).toBe(
        `GET /v1/responses/${RESPONSE_ID}?stream=true&starting_after=${resumedAfter}`,
      );
    },
  );

  it("a cut, then a 5xx on the reconnect, then success", async () => {
    newRun((_, index) =>
      index === 0
        ? { kind: "stream", cutAt: transcript.ends[900]! + 77 }
        : index === 1
          ? { kind: "status", status: 503, body: JSON.parse(fixture("http/server-error.500.json")) }
          : { kind: "stream" },
    );
    const job = start();
    const events = await collect(job);
    expect(strip(events)).toEqual(strip(baseline.events));
    expect((await job.result()).report).toBe(baseline.result.report);
    const requests = requestsOfRun().map(describeRequest);
    expect(requests).toEqual([
      "POST /v1/responses",
      `GET /v1/responses/${RESPONSE_ID}?stream=true&starting_after=${transcript.events[900]!.sequence_number}`,
      `GET /v1/responses/${RESPONSE_ID}?stream=true&starting_after=${transcript.events[900]!.sequence_number}`,
    ]);
  });

  it("a cut while the process goes down: a new client attaches the saved JSON ref and finishes the same job", async () => {
    // Process 1: the stream is cut and the server stays unreachable until it gives up.
    newRun((_, index) =>
      index === 0
        ? { kind: "stream", cutAt: transcript.ends[1500]! + 13 }
        : { kind: "status", status: 503, body: JSON.parse(fixture("http/server-error.500.json")) },
    );
    const first = start(clientFor({ retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 } }));
    const before: ResearchEvent[] = [];
    let saved = "";
    for await (const event of first) {
      before.push(event);
      // What an app does: persist the ref as events arrive.
      if (event.type !== "done" && event.type !== "error") saved = JSON.stringify(first.toRef());
    }
    expect(before.at(-2)).toMatchObject({ type: "error", error: { retryable: true } });
    expect(requestsOfRun().filter((r) => r.method === "POST")).toHaveLength(1);

    // Process 2: a fresh client, the ref from disk, the server back.
    newRun(() => ({ kind: "stream" }));
    const again = clientFor().research.attach(JSON.parse(saved) as JobRef);
    const after = await collect(again);
    expectSeqStrictlyIncreasing(after);
    expect(strip([...before.slice(0, -2), ...after])).toEqual(strip(baseline.events));
    const result = await again.result();
    expect(result.report).toBe(baseline.result.report);
    expect(result.citations).toEqual(baseline.result.citations);
    expect(result.usage).toEqual(baseline.result.usage);
    // Attach replays from the start (so offsets are whole) and never re-submits.
    expect(requestsOfRun().map(describeRequest)).toEqual([`GET /v1/responses/${RESPONSE_ID}?stream=true`]);
  });
});

describe("result() alone counts text without building events: the same ref and result as an iterated job", () => {
  // Cut, then the server stays down: the job ends interrupted, and its ref is where an app resumes.
  const cutThenDown =
    (at: number) =>
    (_: RecordedRequest, index: number): Step =>
      index === 0
        ? { kind: "stream", cutAt: at }
        : { kind: "status", status: 503, body: JSON.parse(fixture("http/server-error.500.json")) };
  const oneTry = () => clientFor({ retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 } });

  it.each([
    { why: "in the text", at: transcript.ends[1500]! + 13 },
    { why: "on an event boundary", at: transcript.ends[2100]! },
    { why: "late in the text", at: transcript.ends.at(-4)! + 40 },
  ])("cut $why: ref, partial result and what an attach delivers", async ({ at }) => {
    const { seen, ref } = await cutReadBothWays(
      () => newRun(cutThenDown(at)),
      () => start(oneTry()),
    );

    newRun(() => ({ kind: "stream" }));
    const after = await collect(clientFor().research.attach(JSON.parse(JSON.stringify(ref)) as JobRef));
    expect(strip([...seen.slice(0, -2), ...after])).toEqual(strip(baseline.events));
  });
});

describe("falling back to polling", () => {
  const tooOld = () => ({
    kind: "status" as const,
    status: 400,
    body: JSON.parse(fixture("http/stream-too-old.400.json")),
  });

  it("a resume the server refuses (too old to stream) polls to completion and adds only what is new", async () => {
    const cut = transcript.ends[2000]! + 31;
    newRun((request, index) => {
      if (index === 0) return { kind: "stream", cutAt: cut };
      if (request.url.includes("stream=true")) return tooOld();
      return { kind: "poll", body: index === 2 ? transcript.running : transcript.final };
    });
    const job = start();
    const events = await collect(job);
    expectSeqStrictlyIncreasing(events);
    expect(textOf(events)).toBe(transcript.report);
    const result = await job.result();
    expect(result.report).toBe(baseline.result.report);
    expect(result.citations).toEqual(baseline.result.citations);
    expect(result.usage).toEqual(baseline.result.usage);
    const cutIndex = lastCompleteEvent(transcript, cut);
    // Polled: heartbeats have no cursor, the final snapshot's events FINAL_CURSOR.
    const afterCut = events.filter(
      (e) => (e.cursor === undefined || e.cursor === FINAL_CURSOR) && e.type !== "done",
    );
    // A heartbeat for the running poll, then the rest of the report as one text event.
    expect(afterCut.map((e) => e.type)).toEqual([
      "status",
      "text",
      ...Array(afterCut.filter((e) => e.type === "citation").length).fill("citation"),
      "usage",
      "status",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(requestsOfRun().map(describeRequest)).toEqual([
      "POST /v1/responses",
      `GET /v1/responses/${RESPONSE_ID}?stream=true&starting_after=${transcript.events[cutIndex]!.sequence_number}`,
      `GET /v1/responses/${RESPONSE_ID}`,
      `GET /v1/responses/${RESPONSE_ID}`,
    ]);
  });

  it.each([
    ["mid-report", (e: ResearchEvent, n: number) => e.type === "text" && n > 1700],
    ["right after created", (e: ResearchEvent) => e.type === "created"],
    ["after a citation", (e: ResearchEvent, n: number) => e.type === "citation" && n > 1000],
    // Mid-batch: `response.completed` maps to usage + status; the ref holds an offset into it.
    ["between the final usage and status", (e: ResearchEvent, n: number) => e.type === "usage" && n > 3000],
    // Everything but `done` was delivered: the attached job has nothing left to deliver but `done`.
    ["after the final status", (e: ResearchEvent) => e.type === "status" && e.status === "completed"],
  ])(
    "attach after a restart (%s) when the replay is refused: text already delivered is not delivered again",
    async (_label, stopAt) => {
      newRun(() => ({ kind: "stream" }));
      const first = start();
      const before: ResearchEvent[] = [];
      let ref = "";
      for await (const event of first) {
        before.push(event);
        if (stopAt(event, before.length)) {
          ref = JSON.stringify(first.toRef());
          break; // the process dies here
        }
      }

      newRun((request) =>
        request.url.includes("stream=true") ? tooOld() : { kind: "poll", body: transcript.final },
      );
      const again = clientFor().research.attach(JSON.parse(ref));
      const after = await collect(again);
      expectSeqStrictlyIncreasing(after);
      // Before + after is the report once: no delivered text comes again.
      expect(textOf(before) + textOf(after)).toBe(transcript.report);
      const citations = [...before, ...after].filter((e) => e.type === "citation");
      expect(citations.map((e) => e.citation)).toEqual(
        baseline.events.filter((e) => e.type === "citation").map((e) => e.citation),
      );
      const result = await again.result();
      expect(result.report).toBe(transcript.report);
      expect(result.citations).toEqual(baseline.result.citations);
      expect(result.usage).toEqual(baseline.result.usage);
      expect(after.at(-1)).toMatchObject({ type: "done", status: "completed" });
      // The job completed once: its completed status is not delivered again.
      const completed = [...before, ...after].filter((e) => e.type === "status" && e.status === "completed");
      expect(completed).toHaveLength(1);
    },
  );

  it("a stream that ends without a terminal event is not success: resume, then poll when resumes keep ending", async () => {
    const firstEnd = transcript.ends[700]!;
    newRun((request, index) => {
      if (index === 0) return { kind: "stream", endAt: firstEnd };
      if (request.url.includes("stream=true"))
        return { kind: "stream", endAt: transcript.blocks[701]!.length * 3 };
      return { kind: "poll", body: transcript.final };
    });
    const job = start();
    const events = await collect(job);
    expect(textOf(events)).toBe(transcript.report);
    expect((await job.result()).citations).toEqual(baseline.result.citations);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const requests = requestsOfRun().map(describeRequest);
    expect(requests[0]).toBe("POST /v1/responses");
    expect(requests[1]).toBe(
      `GET /v1/responses/${RESPONSE_ID}?stream=true&starting_after=${transcript.events[700]!.sequence_number}`,
    );
    expect(requests.at(-1)).toBe(`GET /v1/responses/${RESPONSE_ID}`);
    expect(requests).toHaveLength(3);

    // Its ref says so: re-attaching polls instead of replaying a stream that would repeat the text.
    const ref = JSON.parse(JSON.stringify(job.toRef()));
    expect(ref.resume).toMatchObject({ polling: true, reportLength: transcript.report.length });
    newRun(() => ({ kind: "poll", body: transcript.final }));
    const again = clientFor().research.attach(ref);
    const after = await collect(again);
    expect(textOf(after)).toBe("");
    expect((await again.result()).report).toBe(transcript.report);
    expect(requestsOfRun().map(describeRequest)).toEqual([`GET /v1/responses/${RESPONSE_ID}`]);
  });
});

describe("silence, keepalives and the start request", () => {
  it("no bytes for idleTimeoutMs (no keepalive) is a dropped stream: it resumes", async () => {
    const at = transcript.ends[300]!;
    newRun((_, index) => (index === 0 ? { kind: "stream", silentAt: at } : { kind: "stream" }));
    const began = Date.now();
    const job = start(clientFor({ idleTimeoutMs: 150 }));
    const events = await collect(job);
    expect(Date.now() - began).toBeGreaterThanOrEqual(150);
    expect(strip(events)).toEqual(strip(baseline.events));
    expect(requestsOfRun().map(describeRequest)).toEqual([
      "POST /v1/responses",
      `GET /v1/responses/${RESPONSE_ID}?stream=true&starting_after=${transcript.events[300]!.sequence_number}`,
    ]);
  });

  it("timeoutMs is the job's own deadline, apart from idleTimeoutMs: it stops locally and cancels nothing", async () => {
    newRun(() => ({ kind: "stream", silentAt: transcript.ends[300]! }));
    const job = clientFor({ idleTimeoutMs: 10_000 }).research.start({
      model: STREAMING_MODEL,
      query: "battery rules",
      timeoutMs: 300,
    });
    const error = await job.result().catch((e: unknown) => e);
    expect(JobAbortedError.isInstance(error)).toBe(true);
    expect((error as JobAbortedError).code).toBe("timeout");
    expect(requestsOfRun().map(describeRequest)).toEqual(["POST /v1/responses"]);
    expect(job.toRef()).toMatchObject({
      jobId: RESPONSE_ID,
      cursor: String(transcript.events[300]!.sequence_number),
    });
  });

  it("keepalive comments keep a quiet stream alive past idleTimeoutMs", async () => {
    newRun(() => ({ kind: "stream", keepaliveAt: { at: transcript.ends[300]!, forMs: 400 } }));
    const job = start(clientFor({ idleTimeoutMs: 150 }));
    const events = await collect(job);
    expect(strip(events)).toEqual(strip(baseline.events));
    expect(requestsOfRun()).toHaveLength(1);
  });

  it("a reset before any answer to the start POST: IndeterminateSubmissionError, and the POST is never resent", async () => {
    newRun(() => ({ kind: "reset" }));
    const job = start();
    const events = await collect(job);
    const error = await job.result().catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/did not resend it/);
    expect((error as Error).message).not.toContain(KEY);
    expect(events.map((e) => e.type)).toEqual(["error", "done"]);
    expect(events[0]).toMatchObject({ error: { code: "indeterminate_submission", retryable: false } });
    expect(requestsOfRun()).toHaveLength(1);
  });

  it("a cut after the POST was accepted but before the response id: IndeterminateSubmissionError, one POST", async () => {
    newRun(() => ({ kind: "stream", cutAt: 120 }));
    const job = start();
    await collect(job);
    const error = await job.result().catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /dropped before the response id arrived.*response id is unknown/,
    );
    expect(requestsOfRun()).toHaveLength(1);
  });
});
