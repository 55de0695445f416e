/**
 * Flat memory (issue 12, item 3): a long streamed report is held once. With the finished
 * job *and* its result held, the heap retained after GC stays within the report's own size
 * plus a small allowance: no engine's mapper keeps a second copy (or a `+=` rope) of the
 * report, and no delivered `rawEvent` is retained. The bench (`npm run bench`) measures
 * the same at 1,000,000 deltas.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { describe, expect, it } from "vitest";
import { Sonde } from "../src/index.js";
import { engines } from "./bench/transcripts.mjs";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

const DELTAS = 200_000;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A fetch that answers every request with the transcript, in 64 KiB reads. */
function fetchOf(body: string): typeof fetch {
  const bytes = new TextEncoder().encode(body);
  return async () =>
    new Response(
      new ReadableStream({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 65_536) controller.enqueue(bytes.slice(i, i + 65_536));
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
}

describe("a finished job holds its report once", () => {
  for (const engine of ["openai", "gemini", "perplexity"]) {
    it(`${engine}: retained heap with the job and result held ≤ report + 25% + 4 MB`, async () => {
      const spec = engines[engine]!;
      let { body, report } = spec.transcript(DELTAS);
      const expected = report.length;
      report = "";
      const fetchImpl = fetchOf(body);
      body = "";
      const base = heapAfterGc();
      const client = new Sonde({
        ...spec.settings("http://127.0.0.1:9"),
        fetch: fetchImpl,
        env: {},
        clock: () => new Date("2026-06-01T00:00:00Z"),
      });
      const job = client.research.start({ model: spec.model, query: "memory" });
      const result = await job.result();
      // The transport unwinds in the next ticks (its readers' return() is not awaited).
      await new Promise((resolve) => setTimeout(resolve, 50));
      const retained = heapAfterGc() - base;
      expect(result.report.length).toBe(expected);
      // One byte per character when all are Latin-1, else two (the transcripts have emoji and CJK).
      const reportBytes = /[^\u0000-\u00ff]/.test(result.report) ? expected * 2 : expected;
      expect(job.status).toBe("completed");
      expect(retained).toBeLessThanOrEqual(reportBytes * 1.25 + 4 * 2 ** 20);
    }, 60_000);
  }
});
