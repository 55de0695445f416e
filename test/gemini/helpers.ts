/**
 * A scripted Gemini Interactions server on the shared test server (test/helpers), driven by
 * the transcripts in test/fixtures/gemini/: each route's answer can depend on its call
 * number, the natural way to script "stream, drop, then resume".
 */
import type { HttpHandler } from "msw";
import type { ResearchEvent } from "../../src/events.js";
import { Sonde } from "../../src/index.js";
import { fixturesOf } from "../helpers/fixtures.js";
import { sseBlocks } from "../helpers/sse.js";
import {
  json,
  jsonFixture,
  type Reply,
  routeHandlers,
  sse,
  type TestServerCall,
} from "../helpers/test-server.js";

export const BASE = "https://gemini.test/v1beta";
export const KEY = "AIzaSyTestKey0123456789abcdefghijkl";
export const FAST = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

export const { fixture, fixtureJson } = fixturesOf("gemini");

/** A transcript split into its SSE events (each with its trailing blank line). */
export const blocks = sseBlocks;

export function eventIdOf(block: string): string | undefined {
  return /"event_id":"([^"]+)"/.exec(block)?.[1];
}

/** The blocks after the one whose `event_id` is `lastEventId` (all of them when undefined). */
export function eventsAfter(transcript: string, lastEventId: string | null | undefined): string {
  const all = blocks(transcript);
  if (!lastEventId) return all.join("");
  const index = all.findIndex((block) => eventIdOf(block) === lastEventId);
  return all.slice(index + 1).join("");
}

/** A stream that delivers `body` and then fails like a reset connection. */
export const droppedResponse = (body: string): Reply => sse(body, { end: "drop" });

export function errorResponse(name: string, status: number, headers?: Record<string, string>): Reply {
  return jsonFixture(`gemini/${name}`, { status, ...(headers && { headers }) });
}

export type Recorded = TestServerCall;
type Answer = Reply | Response | Promise<Reply | Response>;

export interface Script {
  /** POST /interactions, call n. */
  create?: (call: number, request: TestServerCall) => Answer;
  /** GET /interactions/{id} without `stream`, call n. */
  get?: (call: number) => Answer;
  /** GET /interactions/{id}?stream=true, call n, with its `last_event_id`. */
  stream?: (call: number, lastEventId: string | null) => Answer;
  /** POST /interactions/{id}/cancel, call n. */
  cancel?: (call: number) => Answer;
}

export function geminiServer(script: Script, base = BASE): { handlers: HttpHandler[]; requests: Recorded[] } {
  const requests: Recorded[] = [];
  // GET serves two resources (a snapshot, or the stream with `stream=true`): counted apart.
  const calls = { get: 0, stream: 0 };
  const missing = () => json({ error: { code: 500, message: "unscripted" } }, { status: 500 });
  return {
    requests,
    handlers: routeHandlers(
      {
        [`POST ${base}/interactions`]: (call) => (script.create ? script.create(call.n, call) : missing()),
        [`POST ${base}/interactions/:id/cancel`]: (call) =>
          script.cancel ? script.cancel(call.n) : missing(),
        [`GET ${base}/interactions/:id`]: (call) => {
          if (call.url.searchParams.get("stream") === "true")
            return script.stream
              ? script.stream(calls.stream++, call.url.searchParams.get("last_event_id"))
              : missing();
          return script.get ? script.get(calls.get++) : missing();
        },
      },
      requests,
    ),
  };
}

export function client(extra: Partial<ConstructorParameters<typeof Sonde>[0]> = {}): Sonde {
  return new Sonde({
    gemini: { apiKey: KEY, baseURL: BASE },
    retry: FAST,
    idleTimeoutMs: 2_000,
    env: {},
    ...extra,
  });
}

export async function collect(job: AsyncIterable<ResearchEvent>): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}

export const reportOf = (events: ResearchEvent[]) =>
  events.map((event) => (event.type === "text" ? event.delta : "")).join("");

/** The interaction with a different status (and nothing else changed). */
export function withStatus(interaction: Record<string, unknown>, status: string): Record<string, unknown> {
  return { ...interaction, status };
}

/** What an interaction looks like mid-run: status in_progress, no steps yet. */
export function running(interaction: Record<string, unknown>): Record<string, unknown> {
  const { steps: _steps, usage: _usage, ...rest } = interaction;
  return { ...rest, status: "in_progress" };
}
