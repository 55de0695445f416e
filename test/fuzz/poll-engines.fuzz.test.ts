/**
 * Every polled engine (the hosted job API, OpenAI's poll-only model),
 * fuzzed through the public client on its recorded exchanges: bodies arriving in any
 * chunks and carrying unknown keys anywhere yield the same events; a damaged body
 * (truncated, corrupted, invalid UTF-8 or JSON) ends the job with exactly one `done` and
 * typed errors only, in bounded time, leaving no timer behind.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SondeOptions } from "../../src/index.js";
import {
  activeTimers,
  applyDamage,
  comparable,
  damage,
  encoder,
  expectWellEnded,
  jsonHead,
  type Route,
  RUNS,
  runJob,
  streamed,
  unavailable,
} from "./harness.js";

const json = (path: string): unknown =>
  JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), "utf8"));
const exchangesOf = (path: string) =>
  (json(path) as { exchanges: { response: { status: number; body: unknown } }[] }).exchanges.map(
    (e) => e.response,
  );

interface Engine {
  name: string;
  options: SondeOptions;
  model: string;
  /** The responses the engine gets, in order: submit, then polls. */
  responses: { status: number; body: unknown }[];
}

const engines: Engine[] = [
  {
    name: "hosted",
    options: { hosted: { apiKey: "sk-hosted-test-fuzz", baseURL: "https://hosted.sonde.test" } },
    model: "hosted:agents.deep_research",
    responses: exchangesOf("hosted/invoke-completed.json"),
  },
  {
    name: "openai (poll-only)",
    options: { openai: { apiKey: "sk-test-fuzz-openai", baseURL: "https://api.openai.test/v1" } },
    model: "openai:gpt-5.5-pro",
    responses: ["pro.queued.json", "pro.in-progress.json", "pro.completed.json"].map((name) => ({
      status: 200,
      body: json(`openai/poll/${name}`),
    })),
  },
];

/** Adds an unknown key to the objects whose visiting index is in `picks`. */
function withUnknownKeys(value: unknown, picks: Set<number>, extra: unknown): unknown {
  let index = 0;
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== "object") return node;
    const here = index++;
    const copy = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]));
    return picks.has(here) ? { ...copy, zz_fuzz_unknown: extra } : copy;
  };
  return walk(value);
}

/** Serves the responses in order, the last one as `last` bytes; anything beyond finds the provider down. */
const serve =
  (engine: Engine, bodies: Uint8Array[], cuts: readonly number[] = []): Route =>
  (_request, call) =>
    call < bodies.length
      ? streamed(bodies[call]!, cuts, { ...jsonHead, status: engine.responses[call]!.status })
      : unavailable();

describe.each(engines)("$name polling (fuzzed)", (engine) => {
  const request = { model: engine.model, query: "fuzz" };
  const bodies = engine.responses.map((r) => encoder.encode(JSON.stringify(r.body)));

  it("yields the same events for any chunking and unknown keys anywhere in the bodies", async () => {
    const baseline = await runJob(engine.options, request, serve(engine, bodies));
    expectWellEnded(baseline);
    expect(baseline.resultError).toBeUndefined();
    expect(baseline.report?.length).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(), { maxLength: 30 }),
        fc.uniqueArray(fc.nat({ max: 40 }), { maxLength: 6 }),
        fc.jsonValue({ maxDepth: 2 }),
        async (cuts, picks, extra) => {
          const changed = engine.responses.map((r) =>
            encoder.encode(JSON.stringify(withUnknownKeys(r.body, new Set(picks), extra))),
          );
          const run = await runJob(engine.options, request, serve(engine, changed, cuts));
          expect(comparable(run.events)).toEqual(comparable(baseline.events));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("ends every damaged body with exactly one done and typed errors only, leaving no timer", async () => {
    const before = activeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.array(damage, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (which, damages, cuts) => {
          const target = which % bodies.length;
          const damaged = bodies.map((body, i) => (i === target ? applyDamage(body, damages) : body));
          expectWellEnded(await runJob(engine.options, request, serve(engine, damaged, cuts)));
        },
      ),
      { numRuns: RUNS },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(activeTimers()).toBeLessThanOrEqual(before);
  });
});
