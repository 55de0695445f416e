/** Shared bits of the OpenAI engine tests: fixtures, a client as a user builds it, event helpers. */
import type { SondeOptions } from "../../src/client.js";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";
import { Sonde } from "../../src/sonde.js";
import { fixturesOf } from "../helpers/fixtures.js";

export const KEY = "sk-test-openai-0123456789abcdef";
export const BASE = "https://api.openai.test/v1";
/** o3/o4-mini deep research shut down on 2026-07-23; a pinned clock lets the streaming models validate. */
export const BEFORE_SHUTDOWN = () => new Date("2026-06-01T00:00:00Z");
export const STREAMING_MODEL = "openai:o4-mini-deep-research";
export const POLL_MODEL = "openai:gpt-5.5-pro";
export const FAST_RETRY = { attempts: 3, minDelayMs: 1, maxDelayMs: 10 };

/** Fixtures under test/fixtures/openai/. */
export const { fixture, fixtureJson } = fixturesOf("openai");

export interface Logged {
  level: string;
  message: string;
  data?: Record<string, unknown>;
}

export function makeClient(options: Partial<SondeOptions> = {}, logged: Logged[] = []): Sonde {
  const log = (level: string) => (message: string, data?: Record<string, unknown>) =>
    logged.push({ level, message, ...(data && { data }) });
  return new Sonde({
    openai: { apiKey: KEY, baseURL: BASE },
    clock: BEFORE_SHUTDOWN,
    retry: FAST_RETRY,
    idleTimeoutMs: 2_000,
    logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
    env: {},
    ...options,
  });
}

export async function collect(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}

export const textOf = (events: ResearchEvent[]) =>
  events.map((event) => (event.type === "text" ? event.delta : "")).join("");

export const ofType = <T extends ResearchEvent["type"]>(events: ResearchEvent[], type: T) =>
  events.filter((event): event is Extract<ResearchEvent, { type: T }> => event.type === type);

/** What the server counts (code points), sliced the way the server means it. */
export const codePointSlice = (text: string, start: number, end: number) =>
  Array.from(text).slice(start, end).join("");

export function expectSeqStrictlyIncreasing(events: ResearchEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    if (events[i]!.seq <= events[i - 1]!.seq) {
      throw new Error(`seq not strictly increasing at ${i}: ${events[i - 1]!.seq} then ${events[i]!.seq}`);
    }
  }
}
