/**
 * The Perplexity engine against a real HTTP server on 127.0.0.1 that misbehaves: streams
 * cut at seeded bytes (clean FIN and RST, inside UTF-8 characters, inside `[web:N]`
 * markers, inside SSE framing) resume with `starting_after` to the uninterrupted result,
 * event for event; a refused resume polls; the create POST is sent exactly once whatever
 * happens to it; a saved ref attaches in a new client.
 */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IndeterminateSubmissionError, type JobRef, type ResearchEvent, Sonde } from "../../src/index.js";
import { type Loopback, type RecordedRequest, startLoopback, writeThenCut } from "../helpers/loopback.js";
import { cutReadBothWays } from "../helpers/read-both-ways.js";
import { lastCompleteEvent, prng, resumeBytes } from "../openai/transcript.js";
import { collect, fastRetry, fixtureText } from "./helpers.js";
import { agentTranscript, AGENT_RESPONSE_ID as RID } from "./transcript.js";

const transcript = agentTranscript({ seed: 20260927 });
const SSE_HEAD = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
const model = "perplexity:medium";
const errors = JSON.parse(fixtureText("perplexity", "agent-errors.json")) as Record<
  string,
  { status: number; body: unknown }
>;

type Step =
  /** `replay`: a resume re-sends this many events before `starting_after` (as servers may). */
  | { kind: "stream"; fin?: number; rst?: number; replay?: number }
  | { kind: "json"; status: number; body: unknown }
  | { kind: "reset" }
  | { kind: "hang" };

let plan: (request: RecordedRequest, index: number) => Step = () => ({ kind: "stream" });
let loop: Loopback;
let runStart = 0;

beforeAll(async () => {
  loop = await startLoopback((request, response, call) => serve(request, response, call - runStart));
});
afterAll(() => loop.close());

function serve(request: RecordedRequest, response: ServerResponse, index: number): void {
  const step = plan(request, index);
  if (step.kind === "reset") {
    response.socket?.destroy();
    return;
  }
  if (step.kind === "hang") return;
  if (step.kind === "json") {
    response.writeHead(step.status, { "content-type": "application/json" });
    response.end(JSON.stringify(step.body));
    return;
  }
  const after = new URL(request.url, loop.url).searchParams.get("starting_after");
  const from = after === null ? undefined : Number(after) - (step.replay ?? 0);
  const bytes = request.method === "POST" ? transcript.bytes : resumeBytes(transcript, from);
  if (step.rst !== undefined) {
    writeThenCut(response, SSE_HEAD, bytes.subarray(0, step.rst));
    return;
  }
  response.writeHead(200, SSE_HEAD);
  // A clean FIN part-way: the body just ends, without a terminal event.
  response.end(step.fin !== undefined ? bytes.subarray(0, step.fin) : bytes);
}

function newRun(next: typeof plan): void {
  runStart = loop.requests.length;
  plan = next;
}
const requestsOfRun = () => loop.requests.slice(runStart).map((r) => `${r.method} ${r.url}`);

const clientFor = (idleTimeoutMs = 5_000) =>
  new Sonde({
    perplexity: { apiKey: "pplx-test-0123456789abcdef", baseURL: loop.url },
    retry: fastRetry,
    idleTimeoutMs,
    env: {},
  });
const start = (client = clientFor()) => client.research.start({ model, query: "Vector DB pricing?" });
const strip = (events: ResearchEvent[]) => events.map(({ seq: _seq, ...rest }) => rest);

/**
 * Process 1: the stream is cut at `rst` and the server answers 500 until the job gives up;
 * what an app does, persist the ref as events arrive. Returns the events and the last ref.
 */
async function dropAndSaveRef(rst: number): Promise<{ before: ResearchEvent[]; saved: string }> {
  newRun((_, index) => (index === 0 ? { kind: "stream", rst } : { kind: "json", ...errors.internal500! }));
  const first = new Sonde({
    perplexity: { apiKey: "pplx-test-0123456789abcdef", baseURL: loop.url },
    retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 },
    env: {},
  }).research.start({ model, query: "Vector DB pricing?" });
  const before: ResearchEvent[] = [];
  let saved = "";
  for await (const event of first) {
    before.push(event);
    if (event.type !== "done" && event.type !== "error") saved = JSON.stringify(first.toRef());
  }
  return { before, saved };
}

let baseline: { events: ResearchEvent[]; result: Awaited<ReturnType<ReturnType<typeof start>["result"]>> };

describe("chaos: cut Agent API streams resume byte-identically", () => {
  beforeAll(async () => {
    newRun(() => ({ kind: "stream" }));
    const job = start();
    baseline = { events: await collect(job), result: await job.result() };
  });

  it("the uninterrupted run is what the transcript says", () => {
    expect(baseline.result.report).toBe(transcript.report);
    expect(baseline.result.status).toBe("completed");
    expect(baseline.events.filter((e) => e.type === "text").length).toBeGreaterThanOrEqual(600);
    const markers = [...transcript.report.matchAll(/\[web:(\d+)\]/g)];
    expect(markers.length).toBeGreaterThan(10);
    const cited = baseline.events.filter((e) => e.type === "citation");
    expect(cited).toHaveLength(markers.length);
    for (const [i, event] of cited.entries()) {
      const { startIndex, endIndex, url } = event.citation;
      expect(transcript.report.slice(startIndex, endIndex)).toBe(markers[i]![0]);
      const id = Number(markers[i]![1]);
      expect(url).toBe(`https://vendor${Math.floor((id - 1) / 20)}.example.com/pricing/${(id - 1) % 20}`);
    }
    expect(baseline.result.usage).toMatchObject({
      searches: 3,
      fetches: 1,
      costUSD: 0.01266,
      costSource: "provider",
    });
  });

  const bytes = transcript.bytes;
  const firstEnd = transcript.ends[0]!;
  const inside = (needle: string, into: number) => bytes.indexOf(Buffer.from(needle), firstEnd + 2000) + into;
  const special = [
    { why: "inside a 4-byte emoji", at: inside("🔋", 2) },
    { why: "inside a 3-byte CJK character", at: inside("検索", 1) },
    { why: "inside a ZWJ sequence", at: inside("👨‍👩‍👧", 5) },
    { why: "inside a [web:N] marker", at: inside("[web:", 3) },
    { why: "inside the data: prefix", at: bytes.indexOf("\ndata: ", firstEnd + 4000) + 3 },
    { why: "between an event's two newlines", at: transcript.ends[300]! - 1 },
    { why: "exactly on an event boundary", at: transcript.ends[500]! },
    { why: "inside the final response.completed", at: transcript.ends.at(-2)! + 400 },
  ];
  const random = prng(20261001);
  const seeded = Array.from({ length: 24 }, (_, i) => ({
    why: `seeded #${i}`,
    // After the first event: before the response id, a cut is an indeterminate submission (below).
    at: firstEnd + Math.floor(random() * (bytes.length - firstEnd - 1)),
  }));
  const cuts = [...special, ...seeded].flatMap((cut) => [
    { ...cut, how: "fin" as const },
    { ...cut, how: "rst" as const },
  ]);

  it("the deliberate cut points are where they claim to be", () => {
    const continuation = (at: number) => (bytes[at]! & 0xc0) === 0x80;
    expect(continuation(special[0]!.at)).toBe(true);
    expect(continuation(special[1]!.at)).toBe(true);
    expect(bytes.subarray(special[3]!.at - 3, special[3]!.at).toString()).toBe("[we");
    expect(bytes.subarray(special[4]!.at - 3, special[4]!.at).toString()).toBe("\nda");
    expect(bytes.subarray(special[5]!.at - 1, special[5]!.at + 1).toString()).toBe("\n\n");
  });

  it.each(cuts)(
    "$how $why (byte $at): the same events, report, citations, usage; one POST",
    async ({ at, how }) => {
      newRun((_, index) => (index === 0 ? { kind: "stream", [how]: at } : { kind: "stream" }));
      const job = start();
      const events = await collect(job);
      const result = await job.result();
      expect(strip(events)).toEqual(strip(baseline.events));
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
      expect(result.report).toBe(baseline.result.report);
      expect(result.citations).toEqual(baseline.result.citations);
      expect(result.usage).toEqual(baseline.result.usage);
      const after = transcript.events[lastCompleteEvent(transcript, at)]!.sequence_number;
      expect(requestsOfRun()).toEqual([
        "POST /v1/agent",
        `GET /v1/agent/${RID}?stream=true&starting_after=${after}`,
      ]);
    },
  );

  it("a refused resume (400, the window passed) polls GET /v1/agent/{id} and adds only what is new", async () => {
    const cut = transcript.ends[400]! + 17;
    const expired = errors.resumeExpired400!;
    newRun((request, index) => {
      if (index === 0) return { kind: "stream", rst: cut };
      if (request.url.includes("stream=true")) return { kind: "json", ...expired };
      return { kind: "json", status: 200, body: index === 2 ? transcript.running : transcript.final };
    });
    const job = start();
    const events = await collect(job);
    const result = await job.result();
    expect(result.report).toBe(baseline.result.report);
    expect(result.citations).toEqual(baseline.result.citations);
    expect(result.usage).toEqual(baseline.result.usage);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    const after = transcript.events[lastCompleteEvent(transcript, cut)]!.sequence_number;
    expect(requestsOfRun()).toEqual([
      "POST /v1/agent",
      `GET /v1/agent/${RID}?stream=true&starting_after=${after}`,
      `GET /v1/agent/${RID}`,
      `GET /v1/agent/${RID}`,
    ]);
  });

  it("a cut, then a saved ref attached by a new client: the same job finished, never re-submitted", async () => {
    const { before, saved } = await dropAndSaveRef(transcript.ends[350]! + 9);
    expect(before.at(-2)).toMatchObject({ type: "error" });
    newRun(() => ({ kind: "stream" }));
    const again = clientFor().research.attach(JSON.parse(saved) as JobRef);
    const after = await collect(again);
    expect(strip([...before.slice(0, -2), ...after])).toEqual(strip(baseline.events));
    expect((await again.result()).report).toBe(transcript.report);
    expect(requestsOfRun()).toEqual([`GET /v1/agent/${RID}?stream=true`]);
  });
});

describe("result() alone: a read's text deltas joined, the same result and ref as an iterated job", () => {
  const n = transcript.ends.length;
  const picks = [0.1, 0.5, 0.9].map((f) => transcript.ends[Math.floor(n * f)]! + 7);
  beforeAll(async () => {
    newRun(() => ({ kind: "stream" }));
    const job = start();
    baseline ??= { events: await collect(job), result: await job.result() };
  });

  it.each(picks.flatMap((at) => [0, 1, 6, 40].map((replay) => ({ at, replay }))))(
    "cut at byte $at, the resume repeating $replay events: the same report, citations and usage",
    async ({ at, replay }) => {
      newRun((_, index) => (index === 0 ? { kind: "stream", rst: at } : { kind: "stream", replay }));
      const result = await start().result();
      expect(result.report).toBe(baseline.result.report);
      expect(result.citations).toEqual(baseline.result.citations);
      expect(result.usage).toEqual(baseline.result.usage);
      expect(result.status).toBe("completed");
    },
  );

  it.each(picks)("cut at byte %i, the server then down: the same ref and partial result", async (at) => {
    const cutThenDown = (_: RecordedRequest, index: number): Step =>
      index === 0 ? { kind: "stream", rst: at } : { kind: "json", ...errors.internal500! };
    const oneTry = () =>
      new Sonde({
        perplexity: { apiKey: "pplx-test-0123456789abcdef", baseURL: loop.url },
        retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 },
        env: {},
        // One instant for both jobs: the refs compare whole, timestamps included.
        clock: () => new Date("2026-12-01T00:00:00Z"),
      });
    const { seen, ref } = await cutReadBothWays(
      () => newRun(cutThenDown),
      () => oneTry().research.start({ model, query: "Vector DB pricing?" }),
    );
    newRun(() => ({ kind: "stream" }));
    const after = await collect(clientFor().research.attach(JSON.parse(JSON.stringify(ref)) as JobRef));
    expect(strip([...seen.slice(0, -2), ...after])).toEqual(strip(baseline.events));
    // Attached and read with result() alone: the replay up to the ref is joined too.
    newRun(() => ({ kind: "stream" }));
    const attached = await clientFor()
      .research.attach(JSON.parse(JSON.stringify(ref)) as JobRef)
      .result();
    expect(attached.report).toBe(baseline.result.report);
    expect(attached.citations).toEqual(baseline.result.citations);
    expect(attached.usage).toEqual(baseline.result.usage);
  });
});

describe("attach after a drop, when the resume is refused", () => {
  it("the attached job polls and delivers exactly the rest: no text twice, every citation once", async () => {
    const { before, saved } = await dropAndSaveRef(transcript.ends[450]! + 5);
    newRun((request) =>
      request.url.includes("stream=true")
        ? { kind: "json", ...errors.resumeExpired400! }
        : { kind: "json", status: 200, body: transcript.final },
    );
    const again = clientFor().research.attach(JSON.parse(saved) as JobRef);
    const after = await collect(again);
    const delivered = [...before.slice(0, -2), ...after];
    const text = delivered.map((e) => (e.type === "text" ? e.delta : "")).join("");
    expect(text).toBe(transcript.report);
    const result = await again.result();
    expect(result.report).toBe(transcript.report);
    expect(result.citations).toEqual(baseline.result.citations);
    expect(delivered.filter((e) => e.type === "citation")).toHaveLength(
      baseline.events.filter((e) => e.type === "citation").length,
    );
    expect(result.usage).toMatchObject({ costUSD: 0.01266, costSource: "provider" });
    expect(requestsOfRun()).toEqual([`GET /v1/agent/${RID}?stream=true`, `GET /v1/agent/${RID}`]);
  });
});

describe("the create POST is sent exactly once", () => {
  it.each([
    ["reset before any answer", (): Step => ({ kind: "reset" })],
    ["no answer within idleTimeoutMs", (): Step => ({ kind: "hang" })],
    ["cut inside the first event, before the response id", (): Step => ({ kind: "stream", rst: 120 })],
    ["ended cleanly before the response id", (): Step => ({ kind: "stream", fin: 120 })],
    ["a 500", (): Step => ({ kind: "json", ...errors.internal500! })],
    ["a 502 from a gateway", (): Step => ({ kind: "json", status: 502, body: "<html>Bad Gateway</html>" })],
  ])("%s: IndeterminateSubmissionError, nothing resent", async (_, step) => {
    newRun(step);
    const error = await start(clientFor(300))
      .result()
      .catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/did not resend/);
    expect(requestsOfRun()).toEqual(["POST /v1/agent"]);
  });
});
