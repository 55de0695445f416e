/**
 * Loopback fakes for the fleet bench, serving jobs the way the real providers do: a stream's
 * events arrive over time (a network write every `TICK_MS` with the events due by then, the
 * whole stream over `STREAM_MS`), a poll-only job runs for `POLL_RUN_MS` and answers
 * `in_progress` to every poll before that, and the portable engine's model, search and reads
 * each take time (`PORTABLE_LATENCY`). Real deep-research jobs take minutes: these are
 * compressed some 100× so that a benchmark of many alternating runs stays within minutes,
 * which makes their events far denser than a real stream's (an upper bound on what the
 * worker's per-event work can cost in wall time).
 */
import type { ServerResponse } from "node:http";
import { demoAnswer } from "../../providers/portable/demo/model.js";
import {
  type ChatMessage,
  corpusFetcher,
  corpusSearch,
  demoCorpus,
  type Fetcher,
  type SearchBackend,
} from "../../providers/portable/index.js";
import { invoked } from "../helpers/hosted-fake.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { longTranscript } from "../openai/transcript.js";
import { engines } from "./transcripts.mjs";

/** How long a streamed job's events take to arrive, first to last. */
export const STREAM_MS = 2_000;
/** A network write every this many ms, holding the events due by then. */
export const TICK_MS = 10;
/** How long a poll-only job runs at the provider before a poll finds it done. */
export const POLL_RUN_MS = 2_000;
/** The portable engine's calls: a model answer, a search, a page read (ms). */
export const PORTABLE_LATENCY = { chatMs: 150, searchMs: 60, fetchMs: 40 };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
};

/** Writes `blocks` (whole SSE events) spread evenly over `STREAM_MS`, a write every `TICK_MS`. */
async function paced(response: ServerResponse, blocks: readonly Buffer[]): Promise<void> {
  response.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
  });
  response.flushHeaders();
  let closed = false;
  response.once("close", () => {
    closed = true;
  });
  const started = performance.now();
  let sent = 0;
  while (sent < blocks.length && !closed) {
    await sleep(TICK_MS);
    const due = Math.min(
      blocks.length,
      Math.ceil(((performance.now() - started) / STREAM_MS) * blocks.length),
    );
    if (due > sent) response.write(Buffer.concat(blocks.slice(sent, due)));
    sent = due;
  }
  response.end();
}

/** The SSE events of a transcript body, each a whole block. */
const blocksOf = (body: string) =>
  body
    .split(/(?<=\n\n)/)
    .filter((block) => block.trim() !== "")
    .map((block) => Buffer.from(block));

export interface Fake {
  loopback: Loopback;
  /** Events a streamed job delivers (or the deltas its report has, for a polled one). */
  events: number;
}

/**
 * OpenAI's Responses API: a background response created with `stream: true` streams the
 * seeded long transcript (3,270 events: reasoning, searches, 3,000 text deltas, citations);
 * without it the create answers `queued` and polls answer `in_progress` until the response
 * has run `POLL_RUN_MS`, then the completed response.
 */
export async function openAI(): Promise<Fake> {
  const transcript = longTranscript({ seed: 11, deltas: 3_000, rounds: 12 });
  const createdAt = new Map<string, number>();
  let n = 0;
  const loopback = await startLoopback(async (request, response) => {
    const url = new URL(request.url, "http://127.0.0.1");
    if (request.method === "POST" && url.pathname === "/v1/responses") {
      const body = JSON.parse(request.body) as { stream?: boolean };
      if (body.stream) return paced(response, transcript.blocks);
      const id = `resp_bench_polled_${n++}`;
      createdAt.set(id, Date.now());
      return json(response, 200, { ...transcript.final, id, status: "queued", output: [], usage: null });
    }
    const id = decodeURIComponent(url.pathname.split("/")[3] ?? "");
    const at = createdAt.get(id);
    if (request.method !== "GET" || at === undefined)
      return json(response, 404, { error: { message: "no" } });
    const snapshot = Date.now() >= at + POLL_RUN_MS ? transcript.final : transcript.running;
    return json(response, 200, { ...snapshot, id });
  });
  return { loopback, events: transcript.events.length };
}

/** Gemini's Interactions API: the Deep Research agent's stream (1,500 text deltas) over `STREAM_MS`. */
export async function gemini(): Promise<Fake> {
  const blocks = blocksOf(engines.gemini!.transcript(1_500).body);
  const loopback = await startLoopback(async (request, response) => {
    if (request.method === "POST") return paced(response, blocks);
    return json(response, 404, { error: { code: 404, message: "not in this fake" } });
  });
  return { loopback, events: blocks.length };
}

/** The hosted job API: invoke, then polls answer `running` until the job has run `POLL_RUN_MS`. */
export async function hosted(): Promise<Fake> {
  const invokedAt = new Map<string, number>();
  let n = 0;
  const loopback = await startLoopback((request, response) => {
    if (request.method === "POST") {
      const id = `job_bench_${n++}`;
      invokedAt.set(id, Date.now());
      return json(response, 200, invoked(id));
    }
    const id = request.url.split("/").at(-1)!;
    const at = invokedAt.get(id);
    if (at === undefined) return json(response, 404, { error: { message: "no such job" } });
    if (Date.now() < at + POLL_RUN_MS) return json(response, 200, { job_id: id, status: "running" });
    return json(response, 200, {
      job_id: id,
      status: "completed",
      result: {
        content: "Heat pumps move heat rather than make it [1].",
        citations: [{ title: "Source", url: `https://example.org/${id}`, snippet: "…" }],
        charge_usd: 1.5,
      },
    });
  });
  return { loopback, events: 0 };
}

/**
 * The portable engine against an OpenAI-compatible chat endpoint that answers the loop's
 * real prompts as the offline demo model does, after `PORTABLE_LATENCY.chatMs`, with the demo
 * corpus as its search backend and web, each call taking its latency.
 */
export async function portableChat(): Promise<{
  loopback: Loopback;
  search: SearchBackend;
  fetcher: Fetcher;
}> {
  const loopback = await startLoopback(async (request, response) => {
    if (request.method !== "POST" || !request.url.endsWith("/chat/completions"))
      return json(response, 404, { error: { message: "not in this fake" } });
    const body = JSON.parse(request.body) as { model: string; messages: ChatMessage[] };
    const content = demoAnswer(body.messages);
    await sleep(PORTABLE_LATENCY.chatMs);
    return json(response, 200, {
      id: "chatcmpl-bench",
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1_000, completion_tokens: Math.ceil(content.length / 4), total_tokens: 1_500 },
    });
  });
  const search = corpusSearch(demoCorpus);
  const fetcher = corpusFetcher(demoCorpus);
  return {
    loopback,
    search: {
      async search(query, options) {
        await sleep(PORTABLE_LATENCY.searchMs);
        return search.search(query, options);
      },
    },
    fetcher: {
      async fetch(url, options) {
        await sleep(PORTABLE_LATENCY.fetchMs);
        return fetcher.fetch(url, options);
      },
    },
  };
}
