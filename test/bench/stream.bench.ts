/**
 * Hot-path benchmarks (`npm run bench`): the SSE reader and the job pipeline on long
 * streams. Quote medians and ratios from vitest's table, never a single timing.
 */
import { test } from "vitest";
import { findModel } from "../../catalog/index.js";
import { ResearchJob } from "../../src/job.js";
import type { EngineSession, MappedEvent } from "../../src/provider.js";
import { readSse } from "../../src/transport/sse.js";

const pricing = findModel("openai:gpt-5.5-pro")!.pricing;
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const DELTAS = 20_000;

const sseBytes = new TextEncoder().encode(
  Array.from(
    { length: DELTAS },
    (_, i) =>
      `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${i},"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Token ${i} 電池 ","logprobs":[]}\n\n`,
  ).join(""),
);

function response(): Response {
  let offset = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= sseBytes.length) return controller.close();
        controller.enqueue(sseBytes.subarray(offset, offset + 16_384));
        offset += 16_384;
      },
    }),
  );
}

function session(): EngineSession {
  return {
    jobId: "job",
    resumable: true,
    cursorRank: (c) => Number(c),
    resumeState: () => ({}),
    async *connect() {
      yield { cursor: "0", data: { kind: "created" } };
      for (let i = 1; i <= DELTAS; i++) yield { cursor: String(i), data: { delta: `Token ${i} ` } };
      yield { cursor: String(DELTAS + 1), data: { kind: "done" } };
    },
    map(wire): MappedEvent[] {
      const data = wire.data as { kind?: string; delta?: string };
      if (data.kind === "created")
        return [{ type: "created", jobId: "job", provider: "openai", model: "openai:gpt-5.5-pro" }];
      if (data.kind === "done") return [{ type: "status", status: "completed" }];
      return [{ type: "text", delta: data.delta! }];
    },
  };
}

test(`stream of ${DELTAS} deltas`, async ({ bench }) => {
  const parse = bench("readSse: parse events", async () => {
    let n = 0;
    for await (const _ of readSse(response(), { provider: "openai", idleTimeoutMs: 10_000 })) n++;
    if (n !== DELTAS) throw new Error(`parsed ${n}`);
  });
  const pipeline = bench("job pipeline: dedup, map, seq, aggregate", async () => {
    const job = new ResearchJob({
      provider: "openai",
      model: "openai:gpt-5.5-pro",
      pricing,
      session: session(),
      retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 1 },
      logger: silent,
      clock: () => new Date(),
      timeoutMs: 60_000,
      cancel: async () => ({ outcome: "cancelled" }),
    });
    let n = 0;
    for await (const _ of job) n++;
    if (n !== DELTAS + 3) throw new Error(`delivered ${n}`);
  });
  await bench.compare(parse, pipeline);
});
