/**
 * Every streaming engine (OpenAI Responses, Gemini Interactions, Perplexity's Agent API,
 * OpenRouter chat completions), fuzzed through the public client on its recorded
 * transcript: any chunking yields the same events; keepalive comments between lines and
 * unknown event kinds between events change nothing; damage of any kind (truncation,
 * corrupted bytes, invalid UTF-8, invalid JSON) ends the job with exactly one `done` and
 * typed errors only, in bounded time, leaving no timer behind.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SondeOptions } from "../../src/index.js";
import {
  activeTimers,
  applyDamage,
  blockStarts,
  comparable,
  damage,
  encoder,
  expectWellEnded,
  fixtureBytes,
  insertAt,
  lineStarts,
  type Route,
  RUNS,
  runJob,
  sseHead,
  streamed,
  unavailable,
} from "./harness.js";

interface Engine {
  name: string;
  options: SondeOptions;
  model: string;
  transcript: Uint8Array;
  /** An event of a kind this engine does not know, in its own wire format. */
  unknownEvent: string;
}

const engines: Engine[] = [
  {
    name: "openai",
    options: {
      openai: { apiKey: "sk-test-fuzz-openai", baseURL: "https://api.openai.test/v1" },
      clock: () => new Date("2026-06-01T00:00:00Z"),
    },
    model: "openai:o4-mini-deep-research",
    transcript: fixtureBytes("openai/research-web-search.sse"),
    unknownEvent:
      'event: response.brand_new_kind\ndata: {"type":"response.brand_new_kind","item_id":"x"}\n\n',
  },
  {
    name: "gemini",
    options: { gemini: { apiKey: "AIzaSyFuzz0123456789", baseURL: "https://gemini.test/v1beta" } },
    model: "gemini:deep-research-preview-04-2026",
    transcript: fixtureBytes("gemini/research.sse"),
    unknownEvent: 'event: brand.new_kind\ndata: {"event_type":"brand.new_kind","payload":{}}\n\n',
  },
  {
    name: "perplexity",
    options: { perplexity: { apiKey: "pplx-test-fuzz", baseURL: "https://perplexity.test" } },
    model: "perplexity:medium",
    transcript: fixtureBytes("perplexity/agent-sample.sse"),
    unknownEvent: 'data: {"type":"response.reasoning.brand_new_kind","thought":"x"}\n\n',
  },
  {
    name: "openrouter",
    options: { openrouter: { apiKey: "sk-or-v1-fuzz", baseURL: "https://openrouter.test/api/v1" } },
    model: "openrouter:perplexity/sonar-deep-research",
    transcript: fixtureBytes("openrouter/sonar-deep-research.sse"),
    unknownEvent:
      'data: {"id":"gen-1767000000-AbCdEfGhIjKlMnOpQrSt","object":"brand.new_kind","created":1767000000,"choices":[]}\n\n',
  },
];

/** The create request streams `body`; anything after it (a resume, a poll) finds the provider down. */
const serve =
  (body: Uint8Array, cuts: readonly number[] = []): Route =>
  (request, call) =>
    call === 0 && request.method === "POST" ? streamed(body, cuts, sseHead) : unavailable();

describe.each(engines)("$name stream (fuzzed)", (engine) => {
  const request = { model: engine.model, query: "fuzz" };

  it("yields the same events for any chunking, keepalives between lines and unknown events between events", async () => {
    const baseline = await runJob(engine.options, request, serve(engine.transcript));
    expectWellEnded(baseline);
    expect(baseline.resultError).toBeUndefined();
    expect(baseline.report?.length).toBeGreaterThan(0);
    const lines = lineStarts(engine.transcript);
    const blocks = blockStarts(engine.transcript);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(), { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        async (cuts, keepalives, unknowns) => {
          const body = insertAt(engine.transcript, [
            ...keepalives.map((k) => ({
              at: lines[k % lines.length]!,
              text: encoder.encode(": keepalive\n"),
            })),
            ...unknowns.map((k) => ({
              at: blocks[k % blocks.length]!,
              text: encoder.encode(engine.unknownEvent),
            })),
          ]);
          const run = await runJob(engine.options, request, serve(body, cuts));
          expect(comparable(run.events)).toEqual(comparable(baseline.events));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("fails an event beyond the 16 Mi-character limit with a typed error, after the job was created", async () => {
    const blocks = blockStarts(engine.transcript);
    const at = blocks[Math.floor(blocks.length / 2)]!;
    const huge = encoder.encode(`data: {"pad":"${"x".repeat(16 * 1024 * 1024)}"}\n\n`);
    const run = await runJob(
      engine.options,
      request,
      serve(insertAt(engine.transcript, [{ at, text: huge }]), [65_536]),
    );
    expectWellEnded(run);
    expect(run.resultError).toBeDefined();
    expect(run.events.some((event) => event.type === "created")).toBe(true);
  });

  it("ends every damaged transcript with exactly one done and typed errors only, leaving no timer", async () => {
    const before = activeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.array(damage, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        async (damages, cuts) => {
          expectWellEnded(
            await runJob(engine.options, request, serve(applyDamage(engine.transcript, damages), cuts)),
          );
        },
      ),
      { numRuns: RUNS },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(activeTimers()).toBeLessThanOrEqual(before);
  });
});
