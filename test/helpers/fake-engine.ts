/**
 * A scripted engine for core tests: wire events with numeric cursors, a configurable
 * drop schedule, and resumes that replay an overlap (as real servers may).
 */
import { findModel } from "../../catalog/index.js";
import { StreamInterruptedError } from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import { ResearchJob } from "../../src/job.js";
import type { EngineSession, MappedEvent, WireEvent } from "../../src/provider.js";

export interface FakeWire {
  kind: "created" | "text" | "citation" | "status" | "usage" | "error";
  value?: string;
}

export interface FakeScript {
  events: FakeWire[];
  /** For connection n (0-based), deliver this many events then drop. Undefined = run to the end. */
  dropAfter?: (number | undefined)[];
  /** On resume, re-send this many events before the cursor. */
  overlap?: number;
  resumable?: boolean;
  /** Ranked (numeric) cursors or opaque string cursors. */
  opaque?: boolean;
  /** Yield arrays of up to this many wire events (one per network read, as real sessions do). */
  batch?: number;
}

export function fakeSession(
  script: FakeScript,
  jobId = "job_1",
): EngineSession & { connects: (string | undefined)[] } {
  let known: string | undefined;
  const connects: (string | undefined)[] = [];
  const cursorOf = (i: number) => (script.opaque ? `ev_${i.toString(36)}_x` : String(i));
  const indexOf = (cursor: string) =>
    script.opaque ? Number.parseInt(cursor.split("_")[1]!, 36) : Number(cursor);
  return {
    connects,
    get jobId() {
      return known;
    },
    resumable: script.resumable ?? true,
    cursorRank: script.opaque ? undefined : (cursor) => Number(cursor),
    resumeState: () => ({ fake: true }),
    async *connect({ cursor }) {
      const n = connects.length;
      connects.push(cursor);
      let from = cursor === undefined ? 0 : indexOf(cursor) + 1;
      if (cursor !== undefined) from = Math.max(0, from - (script.overlap ?? 0));
      const limit = script.dropAfter?.[n];
      let sent = 0;
      let read: WireEvent[] = [];
      for (let i = from; i < script.events.length; i++) {
        if (limit !== undefined && sent >= limit) {
          if (read.length > 0) yield read;
          throw new StreamInterruptedError("fake drop");
        }
        await Promise.resolve();
        const wire = { cursor: cursorOf(i), data: script.events[i] } satisfies WireEvent;
        sent++;
        if (script.batch === undefined) yield wire;
        else if (read.push(wire) === script.batch) {
          yield read;
          read = [];
        }
      }
      if (read.length > 0) yield read;
    },
    map(wire): MappedEvent[] {
      const event = wire.data as FakeWire;
      switch (event.kind) {
        case "created":
          known = jobId;
          return [
            { type: "created", jobId, provider: "openai", model: "openai:gpt-5.5-pro" },
            { type: "status", status: "running" },
          ];
        case "text":
          return [{ type: "text", delta: event.value ?? "" }];
        case "citation":
          return [{ type: "citation", citation: { url: event.value ?? "" } }];
        case "usage":
          return [{ type: "usage", usage: { inputTokens: 1000, outputTokens: 100, searches: 3 } }];
        case "error":
          return [
            {
              type: "error",
              error: { code: "server_error", message: event.value ?? "boom", retryable: false },
            },
            { type: "status", status: "failed" },
          ];
        case "status":
          return [{ type: "status", status: (event.value ?? "completed") as "completed" }];
      }
    },
  };
}

export function script(words: number): FakeWire[] {
  const events: FakeWire[] = [{ kind: "created" }];
  for (let i = 0; i < words; i++) {
    events.push({ kind: "text", value: `w${i} ` });
    if (i % 7 === 3)
      events.push({ kind: "citation", value: `https://example.org/${i % 3}?utm_source=openai` });
  }
  events.push({ kind: "usage" }, { kind: "status", value: "completed" });
  return events;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A job of the core machinery over `session`, as the client would build it for OpenAI. */
export function fakeJob(
  session: EngineSession,
  extra: Partial<ConstructorParameters<typeof ResearchJob>[0]> = {},
): ResearchJob {
  return new ResearchJob({
    provider: "openai",
    model: "openai:gpt-5.5-pro",
    pricing: findModel("openai:gpt-5.5-pro")!.pricing,
    session,
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    logger: silent,
    clock: () => new Date(),
    timeoutMs: 60_000,
    cancel: async () => ({ outcome: "cancelled", finalStatus: "cancelled" }),
    ...extra,
  });
}

/** Every event of a job, iterated to its end. */
export async function collectEvents(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}
