/**
 * `rawEvent` on an iterated job's events is the provider payload the event came from, on
 * every streaming engine's recorded transcript, a plain property (spread, JSON,
 * structuredClone keep it). A text delta read by the fast path is not `JSON.parse`d: its
 * payload is built from what the fast path read, key for key.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ResearchEvent } from "../../src/index.js";
import { engines as benchEngines } from "../bench/transcripts.mjs";
import { fixtureBytes, runJob, sseHead, streamed, unavailable } from "../fuzz/harness.js";

const engines = [
  {
    name: "openai",
    options: {
      openai: { apiKey: "sk-test-raw-openai", baseURL: "https://api.openai.test/v1" },
      clock: () => new Date("2026-06-01T00:00:00Z"),
    },
    model: "openai:o4-mini-deep-research",
    transcript: "openai/research-web-search.sse",
  },
  {
    name: "gemini",
    options: { gemini: { apiKey: "AIzaSyRaw0123456789", baseURL: "https://gemini.test/v1beta" } },
    model: "gemini:deep-research-preview-04-2026",
    transcript: "gemini/research.sse",
  },
  {
    name: "perplexity",
    options: { perplexity: { apiKey: "pplx-test-raw", baseURL: "https://perplexity.test" } },
    model: "perplexity:medium",
    transcript: "perplexity/agent-sample.sse",
  },
  {
    name: "openrouter",
    options: { openrouter: { apiKey: "sk-or-v1-raw", baseURL: "https://openrouter.test/api/v1" } },
    model: "openrouter:perplexity/sonar-deep-research",
    transcript: "openrouter/sonar-deep-research.sse",
    // The first chunk is parsed whole: it names the generation.
    eager: 1,
  },
];

/** Every `data:` payload of a transcript, parsed. */
function payloads(bytes: Uint8Array): unknown[] {
  const text = new TextDecoder().decode(bytes);
  return text
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim())
    .filter((data) => data !== "" && data !== "[DONE]")
    .map((data) => JSON.parse(data));
}

async function iterate(engine: (typeof engines)[number]): Promise<ResearchEvent[]> {
  const body = fixtureBytes(engine.transcript);
  // In pieces, so a read ends inside events and the fast path meets many reads.
  const cuts = Array.from({ length: 40 }, (_, i) => Math.floor(((i + 1) * body.length) / 41));
  const outcome = await runJob(engine.options, { model: engine.model, query: "q" }, (request, call) =>
    call === 0 && request.method === "POST" ? streamed(body, cuts, sseHead) : unavailable(),
  );
  expect(outcome.thrown).toBeUndefined();
  return outcome.events;
}

afterEach(() => vi.restoreAllMocks());

describe.each(engines)("$name: rawEvent of an iterated job", (engine) => {
  it("is the payload the event came from, and reads as a plain property", async () => {
    const sent = payloads(fixtureBytes(engine.transcript)).map((p) => JSON.stringify(p));
    const events = await iterate(engine);
    const texts = events.filter((event) => event.type === "text");
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const event of events) {
      if (event.rawEvent === undefined || event.rawEvent === null) continue;
      expect(sent).toContain(JSON.stringify(event.rawEvent));
    }
    for (const event of texts) {
      expect(Object.keys(event)).toContain("rawEvent");
      expect({ ...event }.rawEvent).toEqual(event.rawEvent);
      expect(JSON.parse(JSON.stringify(event))).toEqual({ ...event });
      expect(structuredClone(event)).toEqual({ ...event });
      // One payload object, not a new parse per read.
      expect(event.rawEvent).toBe(event.rawEvent);
    }
  });

  it("text deltas are not JSON.parsed: their payload is built from what the fast path read", async () => {
    // The bench's transcript: plain deltas as the providers send most of them.
    const DELTAS = 50;
    const bench = benchEngines[engine.name]!;
    const { body } = bench.transcript(DELTAS);
    const bytes = new TextEncoder().encode(body);
    const sent = payloads(bytes).map((payload) => JSON.stringify(payload));
    const parse = vi.spyOn(JSON, "parse");
    // Whole payloads (a delta's escaped text is decoded with JSON.parse of a string token).
    const parsed = () => parse.mock.calls.filter(([text]) => String(text).startsWith("{")).length;
    const outcome = await runJob(
      { ...bench.settings("http://127.0.0.1:9"), clock: () => new Date("2026-06-01T00:00:00Z") },
      { model: bench.model, query: "q" },
      (request, call) =>
        call === 0 && request.method === "POST" ? streamed(bytes, [], sseHead) : unavailable(),
    );
    expect(outcome.thrown).toBeUndefined();
    const texts = outcome.events.filter((event) => event.type === "text");
    expect(texts).toHaveLength(DELTAS);
    expect(parsed()).toBeLessThanOrEqual(sent.length - DELTAS + (engine.eager ?? 0));
    // Each one the payload as sent, keys in order: what JSON.parse would have built.
    for (const event of texts) expect(sent).toContain(JSON.stringify(event.rawEvent));
  });
});
