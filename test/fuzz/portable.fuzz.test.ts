/**
 * The portable engine where it parses wire: OpenAI-compatible chat completions, Tavily
 * search results and fetched pages, fuzzed through the public client. Bodies in any
 * chunks yield the same events; any one damaged body (truncated, corrupted, invalid
 * UTF-8 or JSON, junk inserted) ends the job with exactly one `done` and typed errors
 * only, in bounded time, leaving no timer behind.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { demoAnswer } from "../../providers/portable/demo/model.js";
import { createMemoryStore } from "../../providers/portable/index.js";
import type { SondeOptions } from "../../src/index.js";
import {
  activeTimers,
  applyDamage,
  comparable,
  type Damage,
  damage,
  encoder,
  expectWellEnded,
  jsonHead,
  type Route,
  RUNS,
  runJob,
  streamed,
} from "./harness.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/portable/${name}`, import.meta.url), "utf8");
const template = JSON.parse(fixture("chat-completion.json")) as {
  choices: { message: { content: string } }[];
};
const tavily = encoder.encode(fixture("tavily-search.json"));
const page = encoder.encode(fixture("page.html"));

const options = (): SondeOptions => ({
  portable: {
    chat: { local: { baseURL: "http://chat.test/v1", apiKey: "sk-test-fuzz-chat" } },
    search: { provider: "tavily", apiKey: "tvly-test-fuzz", baseURL: "http://tavily.test" },
    store: createMemoryStore(),
  },
});
const request = {
  model: "portable:local/fuzz-model",
  query: "How many bicycle commuters crossed the river bridge in 2024?",
};

/** Chat answers like the offline demo model; search and pages from the fixtures. Call `hit` gets `damages`. */
const serve =
  (cuts: readonly number[], hit = -1, damages: readonly Damage[] = []): Route =>
  async (req, call) => {
    let body: Uint8Array;
    let head: ResponseInit = jsonHead;
    if (req.url.endsWith("/chat/completions")) {
      const { messages } = (await req.json()) as { messages: never };
      const response = structuredClone(template);
      response.choices[0]!.message.content = demoAnswer(messages);
      body = encoder.encode(JSON.stringify(response));
    } else if (req.url.startsWith("http://tavily.test/")) body = tavily;
    else {
      body = page;
      head = { status: 200, headers: { "content-type": "text/html; charset=utf-8" } };
    }
    return streamed(call === hit ? applyDamage(body, damages) : body, cuts, head);
  };

/** Job ids are random per job; everything else must match. */
const sameJob = (events: Parameters<typeof comparable>[0]) =>
  comparable(events).map((event) => (event.type === "created" ? { ...event, jobId: "pj_*" } : event));

describe("portable engine wire (fuzzed)", () => {
  it("yields the same events for any chunking of every body", async () => {
    const baseline = await runJob(options(), request, serve([]));
    expectWellEnded(baseline);
    expect(baseline.resultError).toBeUndefined();
    expect(baseline.calls).toBeGreaterThan(2);
    expect(baseline.report?.length).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 20 }), async (cuts) => {
        const run = await runJob(options(), request, serve(cuts));
        expect(sameJob(run.events)).toEqual(sameJob(baseline.events));
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it("ends with exactly one done and typed errors only when any one body is damaged, leaving no timer", async () => {
    const before = activeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 20 }),
        fc.array(damage, { minLength: 1, maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (hit, damages, cuts) => {
          expectWellEnded(await runJob(options(), request, serve(cuts, hit, damages)));
        },
      ),
      { numRuns: RUNS },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(activeTimers()).toBeLessThanOrEqual(before);
  });
});
