import { describe, expect, it, vi } from "vitest";
import { StreamInterruptedError } from "../../src/errors.js";
import { parseData, readSse } from "../../src/transport/sse.js";

const encoder = new TextEncoder();

/** A response whose body arrives as these byte chunks, with optional pauses before each. */
function chunked(chunks: (Uint8Array | string | { pause: number })[]): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const chunk of chunks) {
        if (typeof chunk === "object" && "pause" in chunk)
          await new Promise((r) => setTimeout(r, chunk.pause));
        else controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      }
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

async function read(response: Response, idleTimeoutMs = 1_000, onComment?: (c: string) => void) {
  const out = [];
  for await (const message of readSse(response, { provider: "openai", idleTimeoutMs, onComment }))
    out.push(message);
  return out;
}

describe("readSse", () => {
  it("reassembles events split anywhere, including inside a multi-byte character", async () => {
    const text = 'event: response.output_text.delta\ndata: {"delta":"Bätterie 電池 🔋 ok"}\n\n';
    const bytes = encoder.encode(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const messages = await read(chunked([bytes.slice(0, cut), bytes.slice(cut)]));
      expect(messages).toHaveLength(1);
      expect(parseData(messages[0]!, "openai")).toEqual({ delta: "Bätterie 電池 🔋 ok" });
    }
  });

  it("accepts CRLF and CR line endings and exposes id: as the cursor", async () => {
    const messages = await read(
      chunked(['id: ev_1\r\ndata: {"a":1}\r\n\r\n', 'id: ev_2\rdata: {"a":2}\r\r']),
    );
    expect(messages.map((m) => [m.id, m.data])).toEqual([
      ["ev_1", '{"a":1}'],
      ["ev_2", '{"a":2}'],
    ]);
  });

  it("keepalive comments are not events but keep an otherwise quiet stream alive", async () => {
    const comments: string[] = [];
    const response = chunked([
      ": OPENROUTER PROCESSING\n\n",
      { pause: 60 },
      ": OPENROUTER PROCESSING\n\n",
      { pause: 60 },
      ": OPENROUTER PROCESSING\n\n",
      { pause: 60 },
      'data: {"done":true}\n\n',
    ]);
    const messages = await read(response, 100, (c) => comments.push(c));
    expect(messages.map((m) => m.data)).toEqual(['{"done":true}']);
    expect(comments).toHaveLength(3);
  });

  it("no bytes at all for idleTimeoutMs is a dropped stream", async () => {
    const response = chunked(['data: {"a":1}\n\n', { pause: 300 }, 'data: {"a":2}\n\n']);
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const m of readSse(response, { provider: "gemini", idleTimeoutMs: 80 })) seen.push(m.data);
      })(),
    ).rejects.toSatisfy(
      (e) => StreamInterruptedError.isInstance(e) && /no data for 80 ms/.test((e as Error).message),
    );
    expect(seen).toEqual(['{"a":1}']);
  });

  it("a slow consumer is not an idle stream", async () => {
    const response = chunked(["data: 1\n\ndata: 2\n\n"]);
    const seen: string[] = [];
    for await (const m of readSse(response, { provider: "openai", idleTimeoutMs: 30 })) {
      await new Promise((r) => setTimeout(r, 80));
      seen.push(m.data);
    }
    expect(seen).toEqual(["1", "2"]);
  });

  it("a truncated last event (no blank line) is dropped, not half-delivered", async () => {
    const messages = await read(chunked(['data: {"a":1}\n\n', 'data: {"a":']));
    expect(messages.map((m) => m.data)).toEqual(['{"a":1}']);
  });

  it("fails an event larger than maxEventBytes even when it arrives whole in one chunk", async () => {
    // Found by test/fuzz/sse.fuzz.test.ts: the parser's buffer limit only covered events split across chunks.
    const big = `data: ${"x".repeat(2_000)}\n\n`;
    const seen: string[] = [];
    const read = async () => {
      for await (const m of readSse(chunked([`data: ok\n\n${big}data: after\n\n`]), {
        provider: "openai",
        idleTimeoutMs: 1_000,
        maxEventBytes: 1_024,
      }))
        seen.push(m.data);
    };
    await expect(read()).rejects.toThrow(StreamInterruptedError);
    expect(seen).toEqual(["ok"]);
  });

  it("delivers the events that arrived before an oversized one, then fails", async () => {
    // Found by test/fuzz/sse.fuzz.test.ts: the overflow used to discard events already parsed.
    const seen: string[] = [];
    const read = async () => {
      for await (const m of readSse(chunked([`data: ok\n\ndata: ${"x".repeat(2_000)}`]), {
        provider: "openai",
        idleTimeoutMs: 1_000,
        maxEventBytes: 1_024,
      }))
        seen.push(m.data);
    };
    await expect(read()).rejects.toThrow(/max buffer size/);
    expect(seen).toEqual(["ok"]);
  });

  it("[DONE] parses to nothing; malformed JSON is a stream error", () => {
    expect(parseData({ data: "[DONE]" }, "openrouter")).toBeUndefined();
    expect(() => parseData({ data: "{oops" }, "openrouter")).toThrow(StreamInterruptedError);
  });
});

describe("readSse on a reset", () => {
  it("delivers every event that fully arrived before the reset, then reports the drop", async () => {
    // Like a socket: the bytes arrive in one read, the reset surfaces on the next.
    let reads = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (reads++ === 0)
          controller.enqueue(encoder.encode('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":'));
        else controller.error(new TypeError("terminated"));
      },
    });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const m of readSse(new Response(body), { provider: "gemini", idleTimeoutMs: 1_000 })) {
          seen.push(m.data);
          // A busy consumer: the pipe reads ahead and meets the reset meanwhile.
          await new Promise((r) => setTimeout(r, 30));
        }
      })(),
    ).rejects.toSatisfy(
      (e) => StreamInterruptedError.isInstance(e) && /terminated/.test((e as Error).message),
    );
    expect(seen).toEqual(['{"n":1}', '{"n":2}']);
  });
});

describe("readSse idle clock", () => {
  it("starts when the consumer asks for more, not at the last byte: a consumer busier than idleTimeoutMs is no drop", async () => {
    // Fake clocks (timers and performance.now) make the timing exact: the watchdog fires at
    // 50, 100, 150, 200, 250 ms while the consumer is busy until 220 ms and the next byte comes at 260 ms.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    try {
      let push!: (chunk: string | null) => void;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (chunk) => (chunk === null ? controller.close() : controller.enqueue(encoder.encode(chunk)));
        },
      });
      const iterator = readSse(new Response(body), { provider: "openai", idleTimeoutMs: 50 });
      push("data: 1\n\n");
      expect((await iterator.next()).value?.data).toBe("1");
      await vi.advanceTimersByTimeAsync(220); // the consumer is busy: not waiting for the network
      const second = iterator.next(); // waiting from 220 ms
      const outcome = second.then(
        (step) => ({ data: step.value?.data }),
        (error: unknown) => ({ error }),
      );
      let early: unknown;
      void outcome.then((settled) => {
        early = settled;
      });
      await vi.advanceTimersByTimeAsync(40); // 40 ms of waiting < 50 ms idle
      expect(early, "the idle watchdog counted the consumer's busy time as silence").toBeUndefined();
      push("data: 2\n\n");
      push(null);
      expect(await outcome).toEqual({ data: "2" });
      expect((await iterator.next()).done).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});
