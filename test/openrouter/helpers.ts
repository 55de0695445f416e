import { readFileSync } from "node:fs";
import { HttpResponse } from "msw";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";

export const KEY = "sk-or-v1-test-0123456789abcdef";
export const BASE = "https://openrouter.test/api/v1";
export const fastRetry = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

export function fixture(name: string): string {
  return readFileSync(new URL(`../fixtures/openrouter/${name}`, import.meta.url), "utf8");
}

/** The JSON payloads of a fixture's `data:` lines, `[DONE]` kept as the string. */
export function dataLines(sse: string): unknown[] {
  return sse
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => line.slice(6))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

/** Streams `text` in `size`-byte pieces, so events and multi-byte characters split across reads. */
export function sseResponse(
  text: string,
  size = 7,
  headers: Record<string, string> = {},
): HttpResponse<ReadableStream> {
  const bytes = new TextEncoder().encode(text);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
      controller.close();
    },
  });
  return new HttpResponse(stream, { headers: { "content-type": "text/event-stream", ...headers } });
}

export async function collect(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}
