/**
 * Loopback fakes of OpenAI's Responses API (streamed and poll-only background responses) and
 * Gemini's Interactions API for the fleet chaos test, each serving many jobs at once, in the
 * wire formats of test/fixtures (providers/*\/WIRE.md). Streams are paced so that a worker
 * killed every few seconds is often killed mid-stream; resumes (`starting_after`,
 * `last_event_id`) continue after the given event as the real APIs do. Each fake counts its
 * job-creating POSTs per prompt: the test expects exactly one for every job.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { eventIdOf, blocks as geminiBlocks } from "../gemini/helpers.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { frame, longTranscript, RESPONSE_ID, type Transcript } from "../openai/transcript.js";

export interface FleetFake {
  loopback: Loopback;
  /** Job-creating POSTs per prompt. */
  creates: Map<string, number>;
  /** Reads of a streamed job after its create: another worker took it over (resume, replay or poll). */
  takeovers(): number;
}

/** How long a poll-only response runs: long enough to be held, woken and taken over. */
const POLLED_RUN_MS = 2_500;

const SSE_HEAD = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
};

/** Writes `blocks` in `pieces` bursts `gapMs` apart, stopping if the client goes away. */
async function paced(response: ServerResponse, blocks: Buffer[], pieces = 12, gapMs = 250): Promise<void> {
  response.writeHead(200, SSE_HEAD);
  response.flushHeaders();
  let closed = false;
  response.once("close", () => {
    closed = true;
  });
  const size = Math.max(1, Math.ceil(blocks.length / pieces));
  for (let at = 0; at < blocks.length && !closed; at += size) {
    response.write(Buffer.concat(blocks.slice(at, at + size)));
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  response.end();
}

const count = (creates: Map<string, number>, prompt: string) =>
  creates.set(prompt, (creates.get(prompt) ?? 0) + 1).get(prompt)!;

/** A short seeded OpenAI transcript per prompt: its report is what an uninterrupted run yields. */
export function openAITranscript(prompt: string, id = RESPONSE_ID): Transcript {
  const seed = createHash("sha256").update(prompt).digest().readUInt32BE(0);
  const base = longTranscript({ seed, deltas: 150, rounds: 3 });
  if (id === RESPONSE_ID) return base;
  const events = base.events.map((e) => JSON.parse(JSON.stringify(e).replaceAll(RESPONSE_ID, id)));
  const rename = (r: Record<string, unknown>) => ({ ...r, id });
  return {
    ...frame(events, (e) => `event: ${e.type as string}\ndata: ${JSON.stringify(e)}\n\n`),
    final: rename(base.final),
    running: rename(base.running),
    report: base.report,
  };
}

/**
 * OpenAI: `POST /v1/responses` with `stream: true` streams the transcript; without it
 * answers `queued` and the response is polled (`in_progress` for `POLLED_RUN_MS`, then
 * `completed`).
 */
export async function openAIFake(): Promise<FleetFake> {
  const creates = new Map<string, number>();
  const jobs = new Map<string, { transcript: Transcript; createdAt: number; streamed: boolean }>();
  let takeovers = 0;
  const loopback = await startLoopback(async (request, response) => {
    const url = new URL(request.url, "http://127.0.0.1");
    if (request.method === "POST" && url.pathname === "/v1/responses") {
      const body = JSON.parse(request.body) as { input: string; stream?: boolean };
      const n = count(creates, body.input);
      const id = `resp_${createHash("sha256").update(`${body.input}#${n}`).digest("hex").slice(0, 32)}`;
      const transcript = openAITranscript(body.input, id);
      jobs.set(id, { transcript, createdAt: Date.now(), streamed: body.stream === true });
      if (body.stream) return paced(response, transcript.blocks);
      return json(response, 200, { ...transcript.final, status: "queued", output: [], usage: null });
    }
    const id = decodeURIComponent(url.pathname.split("/")[3] ?? "");
    const job = jobs.get(id);
    if (!job) return json(response, 404, { error: { message: `No response with id '${id}'.` } });
    if (job.streamed) takeovers++;
    if (request.method === "GET" && url.searchParams.get("stream") === "true") {
      const after = Number(url.searchParams.get("starting_after") ?? -1);
      const from = job.transcript.events.findIndex((e) => (e.sequence_number as number) > after);
      return paced(response, from < 0 ? [] : job.transcript.blocks.slice(from));
    }
    const done = Date.now() >= job.createdAt + POLLED_RUN_MS;
    if (request.method === "GET")
      return json(response, 200, done ? job.transcript.final : job.transcript.running);
    return json(response, 405, { error: { message: "not in this fake" } });
  });
  return { loopback, creates, takeovers: () => takeovers };
}

const GEMINI_ID = "v1_ChdEZWVwUmVzZWFyY2hGaXh0dXJlMDAxEhdEZWVwUmVzZWFyY2hGaXh0dXJlMDAx";
const geminiFixture = (name: string) =>
  readFileSync(new URL(`../fixtures/gemini/${name}`, import.meta.url), "utf8");

/**
 * Gemini: `POST /v1beta/interactions` streams the recorded Deep Research transcript under a
 * new interaction id; `GET ?stream=true&last_event_id=` continues after that event; a plain
 * GET returns the finished interaction.
 */
export async function geminiFake(): Promise<FleetFake> {
  const creates = new Map<string, number>();
  const transcript = geminiFixture("research.sse");
  const interaction = geminiFixture("research.interaction.json");
  const jobs = new Set<string>();
  let takeovers = 0;
  const loopback = await startLoopback(async (request, response) => {
    const url = new URL(request.url, "http://127.0.0.1");
    const blocksOf = (id: string) => geminiBlocks(transcript.replaceAll(GEMINI_ID, id));
    if (request.method === "POST" && url.pathname === "/v1beta/interactions") {
      const { input } = JSON.parse(request.body) as { input: string };
      const n = count(creates, input);
      const id = `v1_fleet${createHash("sha256").update(`${input}#${n}`).digest("hex").slice(0, 24)}`;
      jobs.add(id);
      return paced(
        response,
        blocksOf(id).map((b) => Buffer.from(b)),
      );
    }
    const id = decodeURIComponent(url.pathname.split("/")[3] ?? "");
    if (!jobs.has(id)) return json(response, 404, { error: { code: 404, message: "not found" } });
    takeovers++;
    if (request.method === "GET" && url.searchParams.get("stream") === "true") {
      const after = url.searchParams.get("last_event_id");
      const all = blocksOf(id);
      const from = after ? all.findIndex((b) => eventIdOf(b) === after) + 1 : 0;
      return paced(
        response,
        all.slice(from).map((b) => Buffer.from(b)),
      );
    }
    if (request.method === "GET")
      return json(response, 200, JSON.parse(interaction.replaceAll(GEMINI_ID, id)));
    return json(response, 405, { error: { code: 405, message: "not in this fake" } });
  });
  return { loopback, creates, takeovers: () => takeovers };
}
