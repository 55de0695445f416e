/**
 * A scripted Gemini Interactions server over msw, driven by the transcripts in
 * test/fixtures/gemini/: each route's answer can depend on its call number, the natural
 * way to script "stream, drop, then resume".
 */
import { readFileSync } from "node:fs";
import { type HttpHandler, HttpResponse, http } from "msw";
import type { ResearchEvent } from "../../src/events.js";
import { Sonde } from "../../src/index.js";

export const BASE = "https://gemini.test/v1beta";
export const KEY = "AIzaSyTestKey0123456789abcdefghijkl";
export const FAST = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

export function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/gemini/${name}`, import.meta.url), "utf8");
}
export function fixtureJson(name: string): Record<string, unknown> {
  return JSON.parse(fixture(name));
}

/** A transcript split into its SSE events (each with its trailing blank line). */
export function blocks(transcript: string): string[] {
  return transcript.split(/(?<=\n\n)/).filter((block) => block.trim() !== "");
}

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

export function sseResponse(body: string): Response {
  return new HttpResponse(body, { headers: { "content-type": "text/event-stream" } });
}

/** A stream that delivers `body` and then fails like a reset connection. */
export function droppedResponse(body: string): Response {
  const bytes = new TextEncoder().encode(body);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      setTimeout(() => controller.error(new TypeError("terminated: other side closed")), 1);
    },
  });
  return new HttpResponse(stream, { headers: { "content-type": "text/event-stream" } });
}

export function errorResponse(name: string, status: number, headers?: Record<string, string>): Response {
  return HttpResponse.json(fixtureJson(name), { status, ...(headers && { headers }) });
}

export interface Recorded {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
}

export interface Script {
  /** POST /interactions, call n. */
  create?: (call: number, request: Request) => Response | Promise<Response>;
  /** GET /interactions/{id} without `stream`, call n. */
  get?: (call: number) => Response | Promise<Response>;
  /** GET /interactions/{id}?stream=true, call n, with its `last_event_id`. */
  stream?: (call: number, lastEventId: string | null) => Response | Promise<Response>;
  /** POST /interactions/{id}/cancel, call n. */
  cancel?: (call: number) => Response | Promise<Response>;
}

export function geminiServer(script: Script, base = BASE): { handlers: HttpHandler[]; requests: Recorded[] } {
  const requests: Recorded[] = [];
  const calls = { create: 0, get: 0, stream: 0, cancel: 0 };
  const record = async (request: Request) =>
    requests.push({
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      body: await request.clone().text(),
    });
  const missing = () => HttpResponse.json({ error: { code: 500, message: "unscripted" } }, { status: 500 });
  return {
    requests,
    handlers: [
      http.post(`${base}/interactions`, async ({ request }) => {
        await record(request);
        return script.create ? script.create(calls.create++, request) : missing();
      }),
      http.post(`${base}/interactions/:id/cancel`, async ({ request }) => {
        await record(request);
        return script.cancel ? script.cancel(calls.cancel++) : missing();
      }),
      http.get(`${base}/interactions/:id`, async ({ request }) => {
        await record(request);
        const url = new URL(request.url);
        if (url.searchParams.get("stream") === "true")
          return script.stream
            ? script.stream(calls.stream++, url.searchParams.get("last_event_id"))
            : missing();
        return script.get ? script.get(calls.get++) : missing();
      }),
    ],
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
