/**
 * Citation tracking is O(delta): a Perplexity-style stream (every annotation at 0/0, sources
 * numbered by inline markers) costs about what the same stream without citations costs, at
 * any length. Guarded with ratios measured in the same run, never a wall-clock limit.
 */
import { expect, test } from "vitest";
import { ChunkMapper } from "../../providers/openrouter/map.js";
import type { MappedEvent } from "../../src/provider.js";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

const SOURCES = 20;

/** Perplexity's shape (openrouter-chat.md §4): every annotation at 0/0 on the first content chunk, `[n]` markers inline. */
function chunk(i: number, citations: boolean): unknown {
  const annotations =
    citations && i === 0
      ? Array.from({ length: SOURCES }, (_, s) => ({
          type: "url_citation",
          url_citation: { start_index: 0, end_index: 0, url: `https://example.org/source-${s}` },
        }))
      : undefined;
  // Markers for known sources and for ones never sent (which stay waiting: the case that used to rescan).
  const marker = i % 10 === 0 ? `[${(i / 10) % (SOURCES + 5)}]` : "";
  const content = citations ? `Claim ${i} ${marker} ` : `Claim ${i} ${marker.replace(/./g, "x")} `;
  return {
    id: "gen-1",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { content, ...(annotations && { annotations }) }, finish_reason: null }],
  };
}

/** One pass of a fresh mapper over the transcript. */
function pass(wires: { data: unknown }[]): { ms: number; citations: number } {
  const mapper = new ChunkMapper({
    model: "openrouter:perplexity/sonar-deep-research",
    fallbackId: () => undefined,
    internalReasoning: true,
    includeThinking: true,
    promptChars: 0,
    logger: silent,
  });
  let citations = 0;
  const started = performance.now();
  for (const wire of wires) {
    const events: MappedEvent[] = mapper.map(wire);
    for (const event of events) if (event.type === "citation") citations++;
  }
  return { ms: performance.now() - started, citations };
}

const transcript = (deltas: number, citations: boolean) =>
  Array.from({ length: deltas }, (_, i) => ({ data: chunk(i, citations) }));

test("unpositioned citations cost O(delta): linear in length, close to a stream without them", () => {
  const shapes = {
    small: transcript(10_000, true),
    large: transcript(40_000, true),
    plain: transcript(40_000, false),
  };
  pass(transcript(5_000, true)); // warm up the JIT for both shapes
  pass(transcript(5_000, false));
  // Interleaved rounds, best of each: a burst of load on a shared machine hits one round of
  // every shape instead of all runs of one shape.
  const best = {
    small: Number.POSITIVE_INFINITY,
    large: Number.POSITIVE_INFINITY,
    plain: Number.POSITIVE_INFINITY,
  };
  let large = { ms: 0, citations: 0 };
  for (let round = 0; round < 5; round++) {
    for (const shape of ["small", "large", "plain"] as const) {
      const run = pass(shapes[shape]);
      best[shape] = Math.min(best[shape], run.ms);
      if (shape === "large") large = run;
    }
  }
  const small = { ms: best.small };
  const plain = { ms: best.plain };
  large = { ms: best.large, citations: large.citations };
  // Each source once as sent (no position), once placed by its first marker.
  expect(large.citations).toBe(2 * SOURCES);
  // Linear: 4× the deltas ≈ 4× the time (a rescan per delta would make it ≈ 16×).
  expect(large.ms / small.ms).toBeLessThan(8);
  // The bench holds this to 1.2× at 200k deltas; here a generous bound against noise.
  expect(large.ms / plain.ms).toBeLessThan(2);
});
