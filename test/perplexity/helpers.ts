import { readFileSync } from "node:fs";
import { HttpResponse, http } from "msw";
import type { SetupServer } from "msw/node";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";

export const fastRetry = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

export interface Exchange {
  request: { method: string; path: string; body?: unknown };
  /** `sse`: a raw `text/event-stream` body instead of JSON. */
  response: { status: number; headers?: Record<string, string>; body?: unknown; sse?: string };
}

export function fixtureText(dir: string, name: string): string {
  return readFileSync(new URL(`../fixtures/${dir}/${name}`, import.meta.url), "utf8");
}

export function transcript(dir: string, name: string): { description: string; exchanges: Exchange[] } {
  return JSON.parse(fixtureText(dir, name));
}

/** The `data:` payloads of an SSE body, in order. */
export function sseEvents(text: string): Record<string, unknown>[] {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line): line is string => line !== undefined && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

export interface Seen {
  method: string;
  path: string;
  headers: Headers;
  body: unknown;
  at: number;
}

/**
 * Replays a transcript strictly in order: request n must have exchange n's method and
 * path, or the test fails. Returns what was received.
 */
export function replay(server: SetupServer, base: string, exchanges: Exchange[]): Seen[] {
  const seen: Seen[] = [];
  server.use(
    http.all(`${base}/*`, async ({ request }) => {
      const url = new URL(request.url);
      const query = url.search;
      const text = await request.text();
      seen.push({
        method: request.method,
        path: url.pathname.slice(new URL(base).pathname.replace(/\/$/, "").length) + query,
        headers: request.headers,
        body: text ? JSON.parse(text) : undefined,
        at: performance.now(),
      });
      const exchange = exchanges[seen.length - 1];
      const last = seen.at(-1)!;
      if (!exchange || exchange.request.method !== last.method || exchange.request.path !== last.path)
        return HttpResponse.json(
          { error: `unexpected ${last.method} ${last.path} (exchange ${seen.length})` },
          { status: 599 },
        );
      if (exchange.response.sse !== undefined)
        return new HttpResponse(exchange.response.sse, {
          status: exchange.response.status,
          headers: { "content-type": "text/event-stream; charset=utf-8", ...exchange.response.headers },
        });
      return HttpResponse.json(exchange.response.body as never, {
        status: exchange.response.status,
        headers: exchange.response.headers,
      });
    }),
  );
  return seen;
}

export async function collect(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}
