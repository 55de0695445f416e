/**
 * Chaos over real sockets (127.0.0.1): the create stream of the research transcript is
 * cut at seeded byte positions — inside multi-byte characters, mid-line, between events —
 * by a reset or a clean end, and resumed streams are cut again. Every run must end with the
 * report byte-identical to an uninterrupted one, no `seq` repeated, and exactly one POST;
 * a cut before the interaction id arrived must end in IndeterminateSubmissionError, unsent.
 */

import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { IndeterminateSubmissionError } from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import { Sonde } from "../../src/index.js";
import type { ResearchResult } from "../../src/job.js";
import type { JobRef } from "../../src/ref.js";
import { type Loopback, type RecordedRequest, startLoopback } from "../helpers/loopback.js";
import { prng } from "../helpers/prng.js";
import { blocks, eventsAfter, FAST, fixture, fixtureJson, KEY, running } from "./helpers.js";

const transcript = fixture("research.sse");
const bytes = Buffer.from(transcript, "utf8");
const stored = fixtureJson("research.interaction.json");
const jobId = stored.id as string;
const firstEventEnd = Buffer.byteLength(blocks(transcript)[0]!, "utf8");

/** Cut positions: inside multi-byte characters, just after `data: `, mid-JSON, between events, and random. */
function cutPoints(): { cut: number; kind: string }[] {
  const random = prng(4);
  const points: { cut: number; kind: string }[] = [];
  const continuation: number[] = [];
  for (let i = 0; i < bytes.length; i++) if ((bytes[i]! & 0xc0) === 0x80) continuation.push(i);
  for (let i = 0; i < 16; i++)
    points.push({
      cut: continuation[Math.floor((i / 16) * continuation.length)]!,
      kind: "inside a character",
    });
  let offset = 0;
  for (const [index, block] of blocks(transcript).entries()) {
    const size = Buffer.byteLength(block, "utf8");
    if (index % 3 === 0) points.push({ cut: offset + "event: ".length + 3, kind: "mid-line (event:)" });
    if (index % 3 === 1) {
      const data = block.indexOf("data: ");
      points.push({ cut: offset + Buffer.byteLength(block.slice(0, data + 6), "utf8"), kind: "after data:" });
    }
    if (index % 3 === 2) points.push({ cut: offset + Math.floor(size / 2), kind: "mid-JSON" });
    if (index % 4 === 0) points.push({ cut: offset + size - 1, kind: "before the blank line" });
    offset += size;
  }
  for (let i = 0; i < 10; i++)
    points.push({ cut: 1 + Math.floor(random() * (bytes.length - 1)), kind: "random" });
  return points.filter((p) => p.cut > 0 && p.cut < bytes.length);
}

/** Sends `body`, then (after the client has read it) resets the connection or ends it cleanly. */
function sendThenCut(response: ServerResponse, body: Buffer, reset: boolean): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  if (!reset) {
    response.end(body);
    return;
  }
  response.write(body, () => setTimeout(() => response.socket?.destroy(), 5));
}

interface Plan {
  /** Plain GETs answered `in_progress` before the interaction shows completed. */
  runningGets: number;
  /** For resumed stream n, where to cut it (undefined = serve it whole), and how. */
  resumeCut: (n: number, length: number) => { at: number; reset: boolean } | undefined;
}

function geminiLoopback(post: (response: ServerResponse) => void, plan: Plan): Promise<Loopback> {
  let gets = 0;
  let streams = 0;
  return startLoopback((request: RecordedRequest, response) => {
    const url = new URL(request.url, "http://127.0.0.1");
    if (request.method === "POST" && url.pathname === "/v1beta/interactions") return post(response);
    if (request.method === "GET" && url.pathname === `/v1beta/interactions/${jobId}`) {
      if (url.searchParams.get("stream") === "true") {
        const rest = Buffer.from(eventsAfter(transcript, url.searchParams.get("last_event_id")), "utf8");
        const cut = plan.resumeCut(streams++, rest.length);
        return cut
          ? sendThenCut(response, rest.subarray(0, cut.at), cut.reset)
          : sendThenCut(response, rest, false);
      }
      const body = JSON.stringify(gets++ < plan.runningGets ? running(stored) : stored);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(body);
      return;
    }
    response.writeHead(404, { "content-type": "application/json" });
    response.end(JSON.stringify({ error: { code: 404, message: "no route", status: "NOT_FOUND" } }));
  });
}

function sonde(loop: Loopback): Sonde {
  return new Sonde({
    gemini: { apiKey: KEY, baseURL: `${loop.url}/v1beta` },
    retry: FAST,
    idleTimeoutMs: 1_000,
    env: {},
  });
}

async function run(job: AsyncIterable<ResearchEvent> & { result(): Promise<ResearchResult> }) {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return { events, result: await job.result().catch((error: unknown) => error) };
}

/** The uninterrupted run's result, and its events (one job object's: one `done`). */
async function uninterrupted(): Promise<ResearchResult & { events: ResearchEvent[] }> {
  const loop = await geminiLoopback((response) => sendThenCut(response, bytes, false), {
    runningGets: 0,
    resumeCut: () => undefined,
  });
  try {
    const { events, result } = await run(
      sonde(loop).research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" }),
    );
    return { ...(result as ResearchResult), events };
  } finally {
    await loop.close();
  }
}

/**
 * Nothing delivered twice: every event but text (which a final snapshot may merge), usage
 * (cumulative) and status heartbeats occurs at most as often as in the uninterrupted run, and
 * the job completes exactly once.
 */
function expectNothingTwice(events: ResearchEvent[], expected: ResearchEvent[], context: string): void {
  const key = ({ seq: _seq, cursor: _cursor, rawEvent: _raw, ...rest }: ResearchEvent) =>
    JSON.stringify(rest);
  const counted = (list: ResearchEvent[]) => {
    const counts = new Map<string, number>();
    for (const event of list)
      if (!["text", "usage", "status", "done"].includes(event.type))
        counts.set(key(event), (counts.get(key(event)) ?? 0) + 1);
    return counts;
  };
  const allowed = counted(expected);
  for (const [event, count] of counted(events))
    expect(count, `${context}: ${event}`).toBeLessThanOrEqual(allowed.get(event) ?? 0);
  const completed = events.filter((e) => e.type === "status" && e.status === "completed");
  expect(completed, context).toHaveLength(1);
}

describe("gemini over real sockets: seeded cuts", () => {
  it("at least 50 cut points: the report is byte-identical, no seq repeats, one POST; cuts before the id are indeterminate, never resent", async () => {
    const expected = await uninterrupted();
    const points = cutPoints();
    expect(points.length).toBeGreaterThanOrEqual(50);
    expect(points.filter((p) => p.kind === "inside a character").length).toBeGreaterThanOrEqual(10);
    let resumed = 0;
    for (const [seed, point] of points.entries()) {
      const random = prng(1000 + seed);
      const reset = random() < 0.6;
      const plan: Plan = {
        runningGets: Math.floor(random() * 4),
        resumeCut: (_n, length) =>
          random() < 0.35 ? { at: Math.floor(random() * length), reset: random() < 0.5 } : undefined,
      };
      const loop = await geminiLoopback(
        (response) => sendThenCut(response, bytes.subarray(0, point.cut), reset),
        plan,
      );
      const context = `seed ${seed}, cut ${point.cut} (${point.kind}, ${reset ? "reset" : "clean end"})`;
      try {
        const { events, result } = await run(
          sonde(loop).research.start({
            model: "gemini:deep-research-preview-04-2026",
            query: "q",
            timeoutMs: 15_000,
          }),
        );
        const posts = loop.requests.filter((r) => r.method === "POST");
        expect(posts, context).toHaveLength(1);
        expect(
          events.map((e) => e.seq),
          context,
        ).toEqual(events.map((_, i) => i));
        if (point.cut < firstEventEnd) {
          expect(IndeterminateSubmissionError.isInstance(result), context).toBe(true);
          expect(loop.requests, context).toHaveLength(1);
          continue;
        }
        resumed++;
        const done = result as ResearchResult;
        expect(done.status, context).toBe("completed");
        expect(done.report, context).toBe(expected.report);
        expect(done.citations, context).toEqual(expected.citations);
        expect(done.usage, context).toEqual(expected.usage);
        expectNothingTwice(events, expected.events, context);
        const delivered = events.map((e) => (e.type === "text" ? e.delta : "")).join("");
        expect(delivered, context).toBe(expected.report);
        expect(
          events.filter((e) => e.type === "done"),
          context,
        ).toHaveLength(1);
      } finally {
        await loop.close();
      }
    }
    expect(resumed).toBeGreaterThanOrEqual(40);
  }, 60_000);

  it("restart and attach over sockets, with the replay cut too: the two halves make the whole report exactly once", async () => {
    const expected = await uninterrupted();
    for (let seed = 0; seed < 12; seed++) {
      const random = prng(7000 + seed);
      // First process: reads part of the stream, saves the ref, and dies.
      const first = await geminiLoopback((response) => sendThenCut(response, bytes, false), {
        runningGets: 0,
        resumeCut: () => undefined,
      });
      const stopAfter = 2 + Math.floor(random() * 40);
      const before: ResearchEvent[] = [];
      let ref!: JobRef;
      try {
        const job = sonde(first).research.start({
          model: "gemini:deep-research-preview-04-2026",
          query: "q",
        });
        for await (const event of job) {
          before.push(event);
          if (before.length === stopAfter) break;
        }
        ref = JSON.parse(JSON.stringify(job.toRef()));
      } finally {
        await first.close();
      }
      // Second process: attaches; its replays are cut at seeded points, and the interaction
      // may already be over by the time it looks.
      const second = await geminiLoopback(() => undefined, {
        runningGets: Math.floor(random() * 4),
        resumeCut: (_n, length) =>
          random() < 0.5 ? { at: Math.floor(random() * length), reset: random() < 0.5 } : undefined,
      });
      const context = `attach seed ${seed}, stop after ${stopAfter}`;
      try {
        const { events, result } = await run(sonde(second).research.attach(ref, { timeoutMs: 15_000 }));
        const done = result as ResearchResult;
        expect(done.status, context).toBe("completed");
        expect(done.report, context).toBe(expected.report);
        expect(done.citations, context).toEqual(expected.citations);
        const text = (list: ResearchEvent[]) => list.map((e) => (e.type === "text" ? e.delta : "")).join("");
        expect(text(before) + text(events), context).toBe(expected.report);
        expectNothingTwice(
          [...before, ...events].filter((e) => e.type !== "done"),
          expected.events,
          context,
        );
        const cited = [...before, ...events].filter((e) => e.type === "citation").length;
        expect(cited, context).toBe(expected.citations.length);
        expect(
          events.map((e) => e.seq),
          context,
        ).toEqual(events.map((_, i) => i));
      } finally {
        await second.close();
      }
    }
  }, 60_000);
});
