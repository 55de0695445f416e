/**
 * The SSE reader (src/transport/sse.ts), fuzzed: any chunking and any line ending yield
 * the same messages, multi-byte characters split anywhere included; comments interleave
 * without changing them; a truncated body yields a prefix; invalid UTF-8 and random bytes
 * never throw anything but a typed error; a line beyond the configured limit is a typed
 * error; every read ends, and no timer is left behind.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StreamInterruptedError } from "../../src/errors.js";
import { type EventSourceMessage, parseData, readSse } from "../../src/transport/sse.js";
import { activeTimers, encoder, RUNS, sseHead, streamed } from "./harness.js";

interface Message {
  event?: string;
  id?: string;
  lines: string[];
}

const fieldText = fc.string({ unit: "grapheme", maxLength: 12 }).filter((s) => !/[\r\n\0]/.test(s));
const dataLine = fc.string({ unit: "grapheme", maxLength: 40 }).filter((s) => !/[\r\n]/.test(s));
const message: fc.Arbitrary<Message> = fc.record(
  {
    event: fieldText.filter((s) => s.length > 0 && s.trim() === s),
    id: fieldText.filter((s) => s.trim() === s),
    lines: fc.array(dataLine, { minLength: 1, maxLength: 3 }),
  },
  { requiredKeys: ["lines"] },
);
const newline = fc.constantFrom("\n", "\r\n", "\r");

function serialize(messages: Message[], eol: string, comments: number[] = []): string {
  let out = "";
  messages.forEach((m, i) => {
    if (comments.includes(i)) out += `: keepalive ${i}${eol}`;
    if (m.event !== undefined) out += `event: ${m.event}${eol}`;
    if (m.id !== undefined) out += `id: ${m.id}${eol}`;
    for (const line of m.lines) out += `data: ${line}${eol}`;
    out += eol;
  });
  return out;
}

async function read(
  bytes: Uint8Array,
  cuts: readonly number[],
  options: { maxEventBytes?: number; onComment?: (c: string) => void } = {},
): Promise<{ messages: EventSourceMessage[]; error: unknown }> {
  const messages: EventSourceMessage[] = [];
  let error: unknown;
  try {
    for await (const m of readSse(streamed(bytes, cuts, sseHead), {
      provider: "openai",
      idleTimeoutMs: 5_000,
      ...options,
    }))
      messages.push({ ...m });
  } catch (e) {
    error = e;
  }
  return { messages, error };
}

const plain = (messages: EventSourceMessage[]) =>
  messages.map((m) => ({ event: m.event, id: m.id, data: m.data }));

describe("readSse (fuzzed)", () => {
  it("yields the messages written, for any chunking, line ending and interleaved comments", async () => {
    const before = activeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { minLength: 1, maxLength: 8 }),
        newline,
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.array(fc.nat({ max: 7 }), { maxLength: 3 }),
        async (messages, eol, cuts, comments) => {
          const bytes = encoder.encode(serialize(messages, eol, comments));
          const seen: string[] = [];
          const { messages: got, error } = await read(bytes, cuts, { onComment: (c) => seen.push(c) });
          expect(error).toBeUndefined();
          // A CR line ending split from its LF is ambiguous only for "\r\n"; the parser must not see an extra line.
          let lastId: string | undefined;
          const expected = messages.map((m) => {
            if (m.id !== undefined) lastId = m.id;
            return { event: m.event, id: lastId, data: m.lines.join("\n") };
          });
          expect(plain(got).map(({ event, data }) => ({ event, data }))).toEqual(
            expected.map(({ event, data }) => ({ event, data })),
          );
          expect(seen.length).toBe(new Set(comments.filter((c) => c < messages.length)).size);
        },
      ),
      { numRuns: RUNS * 3 },
    );
    expect(activeTimers()).toBeLessThanOrEqual(before);
  });

  it("yields a prefix of the messages for a body cut anywhere", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (messages, at, cuts) => {
          const bytes = encoder.encode(serialize(messages, "\n"));
          const full = await read(bytes, []);
          const cut = await read(bytes.subarray(0, at % (bytes.length + 1)), cuts);
          expect(cut.error).toBeUndefined();
          expect(plain(full.messages).slice(0, cut.messages.length)).toEqual(plain(cut.messages));
        },
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it("never throws anything but StreamInterruptedError on arbitrary bytes, invalid UTF-8 included", async () => {
    const before = activeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 400 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (bytes, cuts) => {
          const { error } = await read(bytes, cuts, { maxEventBytes: 256 });
          if (error !== undefined) expect(StreamInterruptedError.isInstance(error), String(error)).toBe(true);
        },
      ),
      { numRuns: RUNS * 3 },
    );
    expect(activeTimers()).toBeLessThanOrEqual(before);
  });

  it("fails a line longer than the configured limit with a typed error, however it arrives", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.boolean(),
        async (times, cuts, terminated) => {
          const limit = 1_024;
          const line = `data: ${"é".repeat(limit * times + 1)}${terminated ? "\n\n" : ""}`;
          const { messages, error } = await read(encoder.encode(`data: ok\n\n${line}data: after\n\n`), cuts, {
            maxEventBytes: limit,
          });
          expect(StreamInterruptedError.isInstance(error), String(error)).toBe(true);
          expect(plain(messages).map((m) => m.data)).toEqual(["ok"]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("parseData returns a value or throws StreamInterruptedError for any payload", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (data) => {
        try {
          parseData({ data, event: undefined, id: undefined }, "gemini");
        } catch (error) {
          expect(StreamInterruptedError.isInstance(error)).toBe(true);
        }
      }),
      { numRuns: RUNS * 5 },
    );
  });
});
