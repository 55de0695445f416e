import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";
import { fixture } from "../helpers/fixtures.js";
import { sseData } from "../helpers/sse.js";
import { json, type Reply, sse, type TestServer } from "../helpers/test-server.js";

export const fastRetry = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

export interface Exchange {
  request: { method: string; path: string; body?: unknown };
  /** `sse`: a raw `text/event-stream` body instead of JSON. */
  response: { status: number; headers?: Record<string, string>; body?: unknown; sse?: string };
}

export function fixtureText(dir: string, name: string): string {
  return fixture(`${dir}/${name}`);
}

export function transcript(dir: string, name: string): { description: string; exchanges: Exchange[] } {
  return JSON.parse(fixtureText(dir, name));
}

/** The `data:` payloads of an SSE body, in order (`[DONE]` skipped). */
export const sseEvents = (text: string) => sseData(text);

export interface Seen {
  method: string;
  path: string;
  headers: Headers;
  body: unknown;
  at: number;
}

/** An exchange's recorded answer as the test server serves it. */
function replyOf(response: Exchange["response"]): Reply {
  if (response.sse !== undefined)
    return sse(response.sse, {
      status: response.status,
      headers: { "content-type": "text/event-stream; charset=utf-8", ...response.headers },
    });
  return json(response.body, {
    status: response.status,
    ...(response.headers && { headers: response.headers }),
  });
}

/**
 * Replays a transcript strictly in order: request n must have exchange n's method and
 * path, or the test fails. Returns what was received.
 */
export function replay(server: TestServer, base: string, exchanges: Exchange[]): Seen[] {
  const seen: Seen[] = [];
  const prefix = new URL(base).pathname.replace(/\/$/, "").length;
  server.route({
    [`ALL ${base}/*`]: (call) => {
      const path = call.url.pathname.slice(prefix) + call.url.search;
      seen.push({ method: call.method, path, headers: call.headers, body: call.json, at: call.at });
      const exchange = exchanges[call.n];
      if (!exchange || exchange.request.method !== call.method || exchange.request.path !== path)
        return json({ error: `unexpected ${call.method} ${path} (exchange ${call.n + 1})` }, { status: 599 });
      return replyOf(exchange.response);
    },
  });
  return seen;
}

export async function collect(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}
