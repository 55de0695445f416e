/**
 * Shared kit of the fuzz suite: a fetch that serves scripted bodies in arbitrary pieces,
 * a job runner with a hard time bound, the mutations a network or a provider can inflict
 * on a transcript, and the checks every run must pass (one `done`, last; typed errors only).
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { expect } from "vitest";
import { type ResearchEvent, Sonde, SondeError, type SondeOptions } from "../../src/index.js";

/** Runs per property: enough to find framing bugs, small enough for the whole suite to stay well under 20 s. */
export const RUNS = 30;

export const encoder = new TextEncoder();
export const fixtureBytes = (path: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/${path}`, import.meta.url)));

/** Splits bytes at the given points (taken modulo the length), as a network would. */
export function pieces(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let last = 0;
  for (const point of points) {
    if (point > last) out.push(bytes.subarray(last, point));
    last = Math.max(last, point);
  }
  if (last < bytes.length) out.push(bytes.subarray(last));
  return out;
}

/** A response whose body arrives in the given pieces, one per read. */
export function streamed(bytes: Uint8Array, cuts: readonly number[], init: ResponseInit): Response {
  const chunks = pieces(bytes, cuts);
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i < chunks.length) controller.enqueue(chunks[i++]!.slice());
        else controller.close();
      },
    }),
    init,
  );
}

export const sseHead = { status: 200, headers: { "content-type": "text/event-stream; charset=utf-8" } };
export const jsonHead = { status: 200, headers: { "content-type": "application/json" } };
export const unavailable = () =>
  new Response(JSON.stringify({ error: { message: "fuzz: unavailable" } }), {
    status: 503,
    headers: jsonHead.headers,
  });

export type Route = (request: Request, call: number) => Response | Promise<Response>;

export interface Outcome {
  events: ResearchEvent[];
  /** What the `for await` threw, if anything. */
  thrown: unknown;
  resultError: unknown;
  report: string | undefined;
  calls: number;
}

/** Runs one job to its end through a fetch that only ever answers from `route` (or the real fetch, for sockets). */
export async function runJob(
  options: SondeOptions,
  request: { model: string; query: string },
  route: Route | "network",
  limitMs = 15_000,
): Promise<Outcome> {
  let calls = 0;
  const client = new Sonde({
    retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 },
    idleTimeoutMs: 5_000,
    env: {},
    ...options,
    ...(route !== "network" && {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => route(new Request(input, init), calls++),
    }),
  });
  const job = client.research.start(request);
  const events: ResearchEvent[] = [];
  let thrown: unknown;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), limitMs);
  });
  const drive = (async () => {
    try {
      for await (const event of job) events.push(event);
    } catch (error) {
      thrown = error;
    }
  })();
  const ended = await Promise.race([drive, bound]);
  clearTimeout(timer);
  if (ended === "timeout") {
    job.abort();
    throw new Error(
      `the job did not end within ${limitMs} ms; events: ${events.map((e) => e.type).join(",")}`,
    );
  }
  let report: string | undefined;
  let resultError: unknown;
  try {
    report = (await job.result()).report;
  } catch (error) {
    resultError = error;
  }
  return { events, thrown, resultError, report, calls };
}

/** What every run must satisfy, however broken its input. */
export function expectWellEnded(outcome: Outcome): void {
  const { events, thrown, resultError } = outcome;
  const done = events.filter((event) => event.type === "done");
  expect(done.length, `done events in ${events.map((e) => e.type).join(",")}`).toBe(1);
  expect(events.at(-1)?.type).toBe("done");
  for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
  if (thrown !== undefined) expect(SondeError.isInstance(thrown), `thrown: ${String(thrown)}`).toBe(true);
  if (resultError !== undefined)
    expect(SondeError.isInstance(resultError), `result(): ${String(resultError)}`).toBe(true);
}

/** Events without what differs between two runs of one transcript (`seq`, raw payloads). */
export const comparable = (events: ResearchEvent[]) =>
  events.map(({ seq: _seq, rawEvent: _raw, ...rest }) => rest);

/** Offsets of every line start (after a `\n`), where a comment line may go without changing any event. */
export function lineStarts(bytes: Uint8Array): number[] {
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) starts.push(i + 1);
  return starts;
}

/** Offsets just after a blank line (an event boundary), where a whole extra event may go. */
export function blockStarts(bytes: Uint8Array): number[] {
  const starts = [0];
  for (let i = 1; i < bytes.length; i++) if (bytes[i] === 10 && bytes[i - 1] === 10) starts.push(i + 1);
  return starts;
}

export function insertAt(bytes: Uint8Array, inserts: { at: number; text: Uint8Array }[]): Uint8Array {
  const sorted = [...inserts].sort((a, b) => a.at - b.at);
  const parts: Uint8Array[] = [];
  let last = 0;
  for (const { at, text } of sorted) {
    parts.push(bytes.subarray(last, at), text);
    last = at;
  }
  parts.push(bytes.subarray(last));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Damage a network or a confused provider can do to a body. */
export type Damage =
  | { kind: "truncate"; at: number }
  | { kind: "flip"; at: number; byte: number }
  | { kind: "insert"; at: number; bytes: number[] };

const junk = [
  "data: {not json\n\n",
  'event: response.brand_new_kind\ndata: {"type":"response.brand_new_kind","sequence_number":1}\n\n',
  'data: {"type":42,"choices":"x"}\n\n',
  "data: null\n\n",
  "data: [DONE]\n\n",
  ": keepalive\n\n",
  "retry: 5\nid: \n\n",
  "data: \n\n",
].map((text) => [...encoder.encode(text)]);
const badUtf8 = [[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf]];

export const damage: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    bytes: fc.constantFrom(...junk, ...badUtf8),
  }),
);

export function applyDamage(bytes: Uint8Array, damages: readonly Damage[]): Uint8Array {
  let out = bytes;
  for (const d of damages) {
    const at = d.at % (out.length + 1);
    if (d.kind === "truncate") out = out.subarray(0, at);
    else if (d.kind === "flip") {
      if (out.length === 0) continue;
      out = out.slice();
      out[at % out.length] = d.byte;
    } else out = insertAt(out, [{ at, text: Uint8Array.from(d.bytes) }]);
  }
  return out;
}

/** Active timers of this process (vitest's own included), to check a run leaves none behind. */
export const activeTimers = () =>
  process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;
