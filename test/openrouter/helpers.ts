import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";
import { fixturesOf } from "../helpers/fixtures.js";
import { type SseReply, sse } from "../helpers/test-server.js";

export const KEY = "sk-or-v1-test-0123456789abcdef";
export const BASE = "https://openrouter.test/api/v1";
export const fastRetry = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

export const { fixture } = fixturesOf("openrouter");

/** Streams `text` in `size`-byte pieces, so events and multi-byte characters split across reads. */
export const sseInPieces = (text: string, size = 7, headers: Record<string, string> = {}): SseReply =>
  sse(text, { chunkSize: size, headers: { "content-type": "text/event-stream", ...headers } });

export async function collect(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}
