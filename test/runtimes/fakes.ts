/**
 * The loopback provider fakes the runtime cases talk to: one real HTTP server on 127.0.0.1,
 * routed by `/<runtime>/<scenario>/…` so every runtime gets its own state (the runtimes run
 * at once). OpenAI (Responses, background) and Gemini (Interactions) in their wire formats,
 * from the same transcripts and fixtures as the Node contract and chaos tests.
 */
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { eventsAfter, running } from "../gemini/helpers.js";
import { type Loopback, type RecordedRequest, startLoopback } from "../helpers/loopback.js";
import { longTranscript, resumeBytes } from "../openai/transcript.js";

const DROP_AFTER_MS = 250;
const SSE_HEAD = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };
const fixtures = new URL("../fixtures/", import.meta.url);
const text = (name: string) => readFileSync(new URL(name, fixtures), "utf8");
const json = (name: string) => JSON.parse(text(name)) as Record<string, unknown>;

export const openaiTranscript = longTranscript({ seed: 11, deltas: 400 });
export const openaiPoll = {
  queued: json("openai/poll/pro.queued.json"),
  running: json("openai/poll/pro.in-progress.json"),
  completed: json("openai/poll/pro.completed.json"),
  cancelled: json("openai/poll/pro.cancelled.json"),
  expected: json("openai/poll/pro.expected.json") as { report: string },
};
const hostedExchanges = (
  JSON.parse(text("hosted/invoke-completed.json")) as {
    exchanges: { response: { body: Record<string, unknown> } }[];
  }
).exchanges.map((exchange) => exchange.response.body);
export const hosted = {
  queued: hostedExchanges[0]!,
  running: hostedExchanges[1]!,
  completed: hostedExchanges[2]!,
  canceled: { job_id: hostedExchanges[0]!.job_id, status: "canceled" },
};
export const geminiTranscript = text("gemini/research.sse");
const perplexityTranscript = Buffer.from(text("perplexity/agent-sample.sse"), "utf8");
const openrouterTranscript = Buffer.from(text("openrouter/sonar-deep-research.sse"), "utf8");
const geminiStored = json("gemini/research.interaction.json");
const geminiId = geminiStored.id as string;

/** A byte offset inside a multi-byte UTF-8 character, about `fraction` of the way into `bytes`. */
export function cutInsideCharacter(bytes: Buffer, fraction: number): number {
  for (let at = Math.floor(bytes.length * fraction); at < bytes.length; at++)
    if ((bytes[at]! & 0xc0) === 0x80) return at;
  throw new Error("no multi-byte character after the cut point");
}
const openaiCut = cutInsideCharacter(openaiTranscript.bytes, 0.45);
const geminiBytes = Buffer.from(geminiTranscript, "utf8");
const geminiCut = cutInsideCharacter(geminiBytes, 0.5);

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/**
 * Sends the first bytes of a stream, then closes the connection mid-event (the body's chunked
 * framing never ends), as a proxy cutting a long stream does. The close waits a moment: a
 * runtime may drop bytes it received but had not yet handed to the reader when the
 * connection fails (Bun's fetch does), and this case is about the resume, not that race.
 */
function sendThenDrop(response: ServerResponse, bytes: Buffer): void {
  response.writeHead(200, SSE_HEAD);
  response.flushHeaders();
  response.write(bytes, () => setTimeout(() => response.socket?.end(), DROP_AFTER_MS));
}

function sendSse(response: ServerResponse, bytes: Buffer): void {
  response.writeHead(200, SSE_HEAD);
  response.end(bytes);
}

/** Per runtime and scenario: how many polls, whether a cancel landed, whether a stream resumed. */
interface ScenarioState {
  polls: number;
  cancelled: boolean;
  resumed: boolean;
}

function openai(
  scenario: string,
  path: string,
  request: RecordedRequest,
  state: ScenarioState,
  response: ServerResponse,
): boolean {
  const url = new URL(request.url, "http://127.0.0.1");
  if (
    scenario === "openai-stream" ||
    scenario === "openai-drop" ||
    scenario === "openai-alone" ||
    scenario === "openai-ref"
  ) {
    if (request.method === "POST" && path === "/v1/responses") {
      if (scenario === "openai-drop" || scenario === "openai-alone")
        sendThenDrop(response, openaiTranscript.bytes.subarray(0, openaiCut));
      else sendSse(response, openaiTranscript.bytes);
      return true;
    }
    if (request.method === "GET" && url.searchParams.get("stream") === "true") {
      const after = url.searchParams.get("starting_after");
      sendSse(response, resumeBytes(openaiTranscript, after === null ? undefined : Number(after)));
      return true;
    }
  }
  if (scenario === "openai-poll" || scenario === "openai-cancel") {
    if (request.method === "POST" && path === "/v1/responses") {
      sendJson(response, 200, openaiPoll.queued);
      return true;
    }
    if (request.method === "POST" && path.endsWith("/cancel")) {
      state.cancelled = true;
      sendJson(response, 200, openaiPoll.cancelled);
      return true;
    }
    if (request.method === "GET") {
      if (state.cancelled) {
        sendJson(response, 200, openaiPoll.cancelled);
        return true;
      }
      // The poll-only job completes on its third poll; the one to cancel never does.
      const done = scenario === "openai-poll" && ++state.polls >= 3;
      sendJson(response, 200, done ? openaiPoll.completed : openaiPoll.running);
      return true;
    }
  }
  return false;
}

function gemini(
  scenario: string,
  path: string,
  request: RecordedRequest,
  state: ScenarioState,
  response: ServerResponse,
): boolean {
  const url = new URL(request.url, "http://127.0.0.1");
  if (request.method === "POST" && path === "/v1beta/interactions") {
    if (scenario === "gemini-drop") sendThenDrop(response, geminiBytes.subarray(0, geminiCut));
    else sendSse(response, geminiBytes);
    return true;
  }
  if (request.method === "GET" && path === `/v1beta/interactions/${geminiId}`) {
    if (url.searchParams.get("stream") === "true") {
      state.resumed = true;
      sendSse(response, Buffer.from(eventsAfter(geminiTranscript, url.searchParams.get("last_event_id"))));
    }
    // Still running when the client looks after the drop, so it resumes the stream.
    else sendJson(response, 200, state.resumed ? geminiStored : running(geminiStored));
    return true;
  }
  return false;
}

/** OpenRouter's chat completions stream (no job id, no resume): the recorded sonar-deep-research run. */
function openrouterApi(
  _scenario: string,
  path: string,
  request: RecordedRequest,
  _state: ScenarioState,
  response: ServerResponse,
): boolean {
  if (request.method !== "POST" || path !== "/api/v1/chat/completions") return false;
  response.writeHead(200, { ...SSE_HEAD, "x-generation-id": "gen-1767000000-AbCdEfGhIjKlMnOpQrSt" });
  response.end(openrouterTranscript);
  return true;
}

/** Perplexity's Agent API, streamed in the background: the spec's sample transcript. */
function perplexityApi(
  _scenario: string,
  path: string,
  request: RecordedRequest,
  _state: ScenarioState,
  response: ServerResponse,
): boolean {
  if (request.method !== "POST" || path !== "/v1/agent") return false;
  sendSse(response, perplexityTranscript);
  return true;
}

/** The hosted job API: invoke, polls (`running` twice, then done), DELETE to cancel. */
function hostedApi(
  scenario: string,
  path: string,
  request: RecordedRequest,
  state: ScenarioState,
  response: ServerResponse,
): boolean {
  if (request.method === "POST" && path === "/v1/agents/agents.deep_research/invoke") {
    sendJson(response, 200, hosted.queued);
    return true;
  }
  if (path !== `/v1/jobs/${hosted.queued.job_id}`) return false;
  if (request.method === "DELETE") {
    state.cancelled = true;
    sendJson(response, 200, hosted.canceled);
    return true;
  }
  if (request.method !== "GET") return false;
  const done = scenario === "hosted-poll" && ++state.polls >= 3;
  sendJson(response, 200, state.cancelled ? hosted.canceled : done ? hosted.completed : hosted.running);
  return true;
}

export interface Fakes {
  url: string;
  /** The requests one runtime's scenario received, as `METHOD /path?query` after the prefix. */
  requests(runtime: string, scenario: string): string[];
  /** Requests whose path named no known runtime/scenario (a case that went astray). */
  stray(): string[];
  close(): Promise<void>;
}

export async function startFakes(runtimes: readonly string[]): Promise<Fakes> {
  const states = new Map<string, ScenarioState>();
  const seen = new Map<string, string[]>();
  const stray: string[] = [];
  const loop: Loopback = await startLoopback((request, response) => {
    const [, runtime = "", scenario = "", ...rest] = new URL(request.url, "http://127.0.0.1").pathname.split(
      "/",
    );
    const path = `/${rest.join("/")}`;
    const key = `${runtime}/${scenario}`;
    const log = seen.get(key) ?? [];
    seen.set(key, log);
    log.push(`${request.method} ${request.url.slice(key.length + 1)}`);
    const state = states.get(key) ?? { polls: 0, cancelled: false, resumed: false };
    states.set(key, state);
    if (runtimes.includes(runtime)) {
      const engines = {
        gemini,
        hosted: hostedApi,
        openrouter: openrouterApi,
        perplexity: perplexityApi,
        openai,
      };
      const engine = engines[scenario.split("-")[0] as keyof typeof engines] ?? openai;
      const handled = engine(scenario, path, request, state, response);
      if (handled) return;
    }
    stray.push(`${request.method} ${request.url}`);
    // A mock that failed to claim its job lands here: a loud 500, never a real provider.
    sendJson(response, 500, { error: { message: `no fake for ${request.method} ${request.url}` } });
  });
  return {
    url: loop.url,
    requests: (runtime, scenario) => seen.get(`${runtime}/${scenario}`) ?? [],
    stray: () => [...stray],
    close: () => loop.close(),
  };
}
