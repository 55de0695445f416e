/**
 * Research events of any engine's job in Redis, one Stream per job: an entry per event
 * (field `e`) or per batch of events a writer stored in one step (field `b`, a JSON array),
 * under id `0-<seq + 1>` of its last event, so any process can follow a job live or after the fact: `tail` resumes after a given
 * `seq` and delivers each event exactly once, with the same `seq` everywhere, and ends with
 * the job (its `done` event, or its stored state turning final without one);
 * `eventStreamResponse` serves them as `text/event-stream` with `Last-Event-ID` resume.
 */
import type { Redis } from "ioredis";
import type { ResearchEvent } from "../events.js";
import { type BlockingConnections, blockingConnections } from "./blocking.js";
import { runScript } from "./scripts.js";

/** How long a job's events are kept after their last write. @defaultValue seven days */
const DEFAULT_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface EventLogOptions {
  /** Prefix of every key. @defaultValue "sonde:" */
  prefix?: string;
  ttlMs?: number;
}

export interface TailOptions {
  /** Deliver the events after this `seq` (a `Last-Event-ID`); all of them when absent. */
  after?: number;
  signal?: AbortSignal;
  /**
   * Longest single blocking read: a quiet tail looks at the job's stored state this often (an
   * end recorded by `sonde/worker` wakes it at once), and re-blocks until the job ends.
   * @defaultValue 5_000
   */
  blockMs?: number;
  /**
   * Called when the tail finds the job `deferred` (once per deferral it sees, with the state's
   * error): the job is not over, so the tail goes on, and ends once the job, resumed, ends.
   */
  onDeferred?: (state: { status: "deferred"; error?: { code: string; message: string } }) => void;
}

/**
 * The statuses of a job's stored state (`sonde/worker`'s) that end it: once the state holds one
 * of these, every event the job will ever have is stored. `deferred` is not one: a deferred job
 * goes on when it is resumed.
 */
export const FINAL_JOB_STATUSES = [
  "completed",
  "incomplete",
  "cancelled",
  "failed",
  "indeterminate",
] as const;

/**
 * How a tail ended (the tail's return value; `eventStreamResponse` sends it as its last event,
 * `end`): after the job's `done` event, with that event's status, or, for a job that ended
 * without one, once its stored state was final: with that state's status and error. A job is
 * `indeterminate` when its submission may have reached the provider and no id came back: it
 * may still be running there, so no `done` is made up for it.
 */
export interface TailEnd {
  /** `completed`, `incomplete`, `cancelled`, `failed`, or `indeterminate`. */
  status: string;
  /** The stored state's error, for a job that ended without `done` (`indeterminate_submission`, …). */
  error?: { code: string; message: string };
}

export interface EventLog {
  /**
   * Stores `event` under its `seq` unless that seq is stored (then false). `state`, when
   * given, is written to the job's state hash in the same atomic step (a worker's ref).
   */
  append(jobId: string, event: ResearchEvent, state?: { ref: unknown }): Promise<boolean>;
  /**
   * Stores `events` (in `seq` order) in one round trip, skipping seqs stored before, and
   * `state` with them in the same atomic step; returns how many were new.
   */
  appendMany(jobId: string, events: ResearchEvent[], state?: { ref: unknown }): Promise<number>;
  /**
   * Events after `after`, live, until the job ends: after its `done` event, or, for a job whose
   * stored state turned final without one (an `indeterminate` job, one cancelled before it
   * started), after the last event it stored. Returns how it ended (`TailEnd`); throws the
   * signal's reason if `signal` aborts it first.
   */
  tail(jobId: string, options?: TailOptions): AsyncGenerator<ResearchEvent, TailEnd, undefined>;
  /** Events stored so far. */
  read(jobId: string): Promise<ResearchEvent[]>;
  /**
   * The job's keys: its events, its state hash (a worker's ref and status) and its `ended`
   * stream (an entry per end or deferral, which wakes tails and waiters).
   */
  keys(jobId: string): { events: string; state: string; ended: string };
  /** How long a job's events are kept after their last write. */
  readonly ttlMs: number;
  /** Closes the idle connections kept for tails (they hold no process open, and close by themselves after 30 s idle). */
  close(): void;
}

/** An event as the log stores it: rawEvent is the engine's payload, large, and only useful to the process that got it. */
export function storedEventJson(event: ResearchEvent): string {
  // Most events carry none: no copy of every event just to drop an absent field.
  if (event.rawEvent === undefined) return JSON.stringify(event);
  const { rawEvent: _raw, ...stored } = event;
  return JSON.stringify(stored);
}

/** The events of one stream entry: one event (`e`) or a batch (`b`). */
export function eventsOf(fields: string[]): ResearchEvent[] {
  const parsed = JSON.parse(fields[1]!) as ResearchEvent | ResearchEvent[];
  return fields[0] === "b" ? (parsed as ResearchEvent[]) : [parsed as ResearchEvent];
}

/**
 * A batch as the append scripts take it (commands/append-batch.lua): the events' seqs run from
 * `first` to `last` in order, and `blob` is the stream entry's value, encoded once here: the
 * event's JSON for one event, the JSON array of all of them otherwise. The script stores it
 * as it is: neither side splits, copies or re-encodes it per event.
 */
export interface EncodedBatch {
  first: number;
  last: number;
  count: number;
  blob: string;
}

/** Encodes `count` events with seqs `first`, `first + 1`, …, given as their stored JSON texts joined by commas. */
export function encodeJoined(joined: string, count: number, first: number): EncodedBatch {
  return { first, last: first + count - 1, count, blob: count === 1 ? joined : `[${joined}]` };
}

/** Encodes the stored JSON texts of events with seqs `first`, `first + 1`, …. */
export const encodeBatch = (texts: readonly string[], first: number): EncodedBatch =>
  encodeJoined(texts.join(","), texts.length, first);

/** The arguments of `appendBatch` (commands/append-batch.lua) for `batch`. */
export const batchArgs = (batch: EncodedBatch) => [batch.first, batch.last, batch.count, batch.blob];

/**
 * What an append script answers: `[new events, 0]` when the batch was stored or (`[0, 0]`)
 * every seq of it was stored before; `[-1, top]` when it straddles the stored end at seq
 * `top`: nothing was written, and the caller sends again what is past `top`.
 */
export type AppendAnswer = [number, number];

/**
 * Sends `count` events of seqs `first` … `last` (their stored JSON texts joined by commas; `last`
 * is `first + count - 1` unless given) with `send`, an append script (append-batch.lua); if part
 * of them was stored before (a writer that was taken over, or retried, and still wrote), sends
 * again the events past the stored end. Returns the script's last answer.
 */
export async function appendRetrying(
  joined: string,
  count: number,
  first: number,
  send: (batch: EncodedBatch) => Promise<unknown>,
  last = first + count - 1,
): Promise<number[]> {
  for (;;) {
    const answer = (await send({ ...encodeJoined(joined, count, first), last })) as number[];
    const [added, top] = answer as AppendAnswer;
    // -2 (sonde/worker's scripts): the job is over, nothing was written.
    if (added !== -1) return answer;
    // Rare (a takeover's overlap): the texts are JSON.stringify's, so they round-trip exactly.
    const rest = (JSON.parse(`[${joined}]`) as ResearchEvent[]).filter((event) => event.seq > top);
    joined = rest.map((event) => JSON.stringify(event)).join(",");
    count = rest.length;
    first = rest[0]!.seq;
    last = rest.at(-1)!.seq;
  }
}

/** A job's keys (EventLog.keys); sonde/worker names its state and `ended` stream with these too. */
export const jobKeys = (prefix: string, jobId: string) => ({
  events: `${prefix}events:{${jobId}}`,
  state: `${prefix}job:{${jobId}}`,
  ended: `${prefix}ended:{${jobId}}`,
});

/**
 * A job's events in Redis, written once per `seq` and read live or after the fact.
 * @example
 * ```ts
 * import { createEventLog } from "sonde/redis";
 *
 * for await (const event of createEventLog(redis).tail(id, { after: 12 })) console.log(event.seq, event.type);
 * ```
 */
export function createEventLog(redis: Redis, options: EventLogOptions = {}): EventLog {
  const prefix = options.prefix ?? "sonde:";
  const ttl = options.ttlMs ?? DEFAULT_TTL_MS;
  const keys = (jobId: string) => jobKeys(prefix, jobId);
  const parse = (fields: string[]) => eventsOf(fields);
  // A blocking read holds its connection: each tail borrows one of its own.
  const connections = blockingConnections(redis);
  const appendMany = async (jobId: string, events: ResearchEvent[], state?: { ref: unknown }) => {
    if (events.length === 0) return 0;
    const k = keys(jobId);
    const ref = state ? JSON.stringify(state.ref) : "";
    // The whole batch as one argument: a command of an argument per event costs far more to
    // encode and send than the bytes themselves.
    const texts = events.map(storedEventJson);
    const send = (batch: EncodedBatch) =>
      runScript(redis, "appendResearchEvent", [k.events, k.state], [ttl, ref, ...batchArgs(batch)]);
    const [added] = await appendRetrying(
      texts.join(","),
      texts.length,
      events[0]!.seq,
      send,
      events.at(-1)!.seq,
    );
    return added!;
  };
  return {
    keys,
    ttlMs: ttl,
    appendMany,
    close: () => connections.close(),
    async append(jobId, event, state) {
      return (await appendMany(jobId, [event], state)) === 1;
    },
    async read(jobId) {
      return (await redis.xrange(keys(jobId).events, "-", "+")).flatMap(([, fields]) => parse(fields));
    },
    tail: (jobId, tailOptions = {}) => tailEvents(redis, connections, keys(jobId), tailOptions),
  };
}

/**
 * A job's events after `options.after`, live, until the job ends (EventLog.tail): blocking reads
 * of its stream and its `ended` stream on a borrowed connection, and a look at its stored state
 * (tail-state.lua) before the first, after a quiet one and after an end.
 */
async function* tailEvents(
  redis: Redis,
  connections: BlockingConnections,
  k: { events: string; state: string; ended: string },
  tailOptions: TailOptions,
): AsyncGenerator<ResearchEvent, TailEnd, undefined> {
  const after = tailOptions.after ?? -1;
  // Entry ids are `0-<last seq + 1>`: `last` is the last entry delivered (or skipped).
  let last = `0-${after + 1}`;
  let ended = "0-0";
  const signal = tailOptions.signal;
  const reader = connections.acquire();
  // Given back for the next tail only after a clean end (not mid-read, not after an error).
  let reusable = false;
  const stop = () => reader.disconnect();
  signal?.addEventListener("abort", stop, { once: true });
  // The job's state is read before the first block, after a quiet block, and after an end.
  let look = true;
  /** The `ended` entry of the deferral last reported, while the job is deferred. */
  let deferred: string | undefined;
  try {
    while (!signal?.aborted) {
      let entries: [string, string[]][] = [];
      let final: TailEnd | undefined;
      let deferral: Parameters<NonNullable<TailOptions["onDeferred"]>>[0] | undefined;
      if (look) {
        look = false;
        const [status, error, endedId, rest] = (await runScript(
          redis,
          "tailState",
          [k.state, k.events, k.ended],
          [`0-${Number(last.slice(2)) + 1}`, ...FINAL_JOB_STATUSES, "deferred"],
        )) as [string | null, string | null, string, [string, string[]][] | null];
        ended = endedId;
        const stored = error ? { error: JSON.parse(error) as NonNullable<TailEnd["error"]> } : {};
        entries = rest ?? [];
        if (status === "deferred") {
          // Each deferral adds an `ended` entry: one seen with a new entry is a new deferral,
          // reported after the events stored before it.
          if (deferred === undefined || (endedId !== deferred && endedId !== "0-0"))
            deferral = { status, ...stored };
          deferred = endedId;
        } else {
          deferred = undefined;
          if (rest) final = { status: status!, ...stored };
        }
      }
      if (!final && !deferral) {
        const reply = (await reader
          .xread("BLOCK", tailOptions.blockMs ?? 5_000, "STREAMS", k.events, k.ended, last, ended)
          .catch((error: unknown) => {
            if (signal?.aborted) return null;
            throw error;
          })) as [string, [string, string[]][]][] | null;
        if (signal?.aborted) break;
        // A quiet block, or an end (or deferral) recorded: look at the state again.
        look = reply === null;
        for (const [key, read] of reply ?? []) {
          if (key.endsWith(k.events)) entries = read;
          else look = true;
        }
      }
      for (const [id, fields] of entries) {
        last = id;
        for (const event of eventsOf(fields)) {
          // The first batch after a resume point may begin before it.
          if (event.seq <= after) continue;
          reusable = true;
          yield event;
          reusable = false;
          if (event.type === "done") {
            reusable = true;
            return { status: event.status };
          }
        }
      }
      if (final) {
        reusable = true;
        return final;
      }
      if (deferral) tailOptions.onDeferred?.(deferral);
    }
    throw signal!.reason;
  } finally {
    signal?.removeEventListener("abort", stop);
    connections.release(reader, reusable && !signal?.aborted);
  }
}

/**
 * Serves a job's events as `text/event-stream`: each event's `id` is its `seq`, so a
 * browser's `EventSource` resumes after a drop with `Last-Event-ID` and gets every event
 * exactly once. The stream ends with the job (after its `done` event, or once its stored
 * state is final without one, as `tail` does) with a last event named `end`, with no `id`,
 * whose data is the `TailEnd` (`{"status":"indeterminate","error":{…}}`): a browser closes
 * its `EventSource` on it (`source.addEventListener("end", () => source.close())`), since an
 * `EventSource` reconnects after any close, and one that reconnects anyway gets `end` again
 * and no event twice. A job found `deferred` (not over: it waits for `queue.resume`) gets an
 * event named `deferred`, with no `id`, whose data is `{"status":"deferred","error":{…}}`,
 * and the stream stays open.
 * @example
 * ```ts
 * import { createEventLog, eventStreamResponse } from "sonde/redis";
 *
 * const log = createEventLog(redis);
 * // In any fetch-style handler (a browser's EventSource resumes with Last-Event-ID):
 * export const GET = (request: Request) => eventStreamResponse(log, new URL(request.url).searchParams.get("id")!, request);
 * ```
 */
export function eventStreamResponse(
  log: EventLog,
  jobId: string,
  request: { headers: { get(name: string): string | null }; signal?: AbortSignal },
): Response {
  const lastEventId = request.headers.get("last-event-id");
  const after = lastEventId !== null && /^\d+$/.test(lastEventId) ? Number(lastEventId) : undefined;
  const controller = new AbortController();
  request.signal?.addEventListener("abort", () => controller.abort(), { once: true });
  const encoder = new TextEncoder();
  let output: ReadableStreamDefaultController<Uint8Array> | undefined;
  const events = log.tail(jobId, {
    ...(after !== undefined && { after }),
    signal: controller.signal,
    onDeferred: (state) =>
      output?.enqueue(encoder.encode(`event: deferred\ndata: ${JSON.stringify(state)}\n\n`)),
  });
  const body = new ReadableStream<Uint8Array>({
    start(stream) {
      output = stream;
    },
    async pull(stream) {
      try {
        const next = await events.next();
        if (next.done) {
          stream.enqueue(encoder.encode(`event: end\ndata: ${JSON.stringify(next.value)}\n\n`));
          return stream.close();
        }
        const event = next.value;
        stream.enqueue(
          encoder.encode(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
        );
      } catch (error) {
        if (controller.signal.aborted) stream.close();
        else stream.error(error);
      }
    },
    cancel() {
      controller.abort();
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
  });
}
