import { readFileSync } from "node:fs";
import { HttpResponse, http } from "msw";
import type { SetupServer } from "msw/node";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";

export const fastRetry = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

export interface Exchange {
  request: { method: string; path: string; body?: unknown };
  response: { status: number; headers?: Record<string, string>; body: unknown };
}

export function transcript(dir: string, name: string): { description: string; exchanges: Exchange[] } {
  return JSON.parse(readFileSync(new URL(`../fixtures/${dir}/${name}`, import.meta.url), "utf8"));
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
      const text = await request.text();
      seen.push({
        method: request.method,
        path: url.pathname.slice(new URL(base).pathname.replace(/\/$/, "").length),
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
