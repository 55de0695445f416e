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
import { createMemoryStore, defaultFetcher } from "../../providers/portable/index.js";
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

/**
 * Chat, search and pages all answered by `route`: the real page fetcher (HTML to text)
 * sends through it with no address lookup, so nothing here can reach a real host.
 */
const options = (route: Route): SondeOptions => ({
  portable: {
    chat: { local: { baseURL: "http://chat.test/v1", apiKey: "sk-test-fuzz-chat" } },
    search: { provider: "tavily", apiKey: "tvly-test-fuzz", baseURL: "http://tavily.test" },
    fetcher: defaultFetcher({
      lookup: false,
      robots: false,
      fetch: async (input, init) => route(new Request(input, init), -1),
    }),
    store: createMemoryStore(),
  },
});
const request = {
  model: "portable:local/fuzz-model",
  query: "How many bicycle commuters crossed the river bridge in 2024?",
};

/** Chat answers like the offline demo model; search and pages from the fixtures. Request `hit` (counting all) gets `damages`. */
const served: string[] = [];
function serve(cuts: readonly number[], hit = -1, damages: readonly Damage[] = []): Route {
  let call = 0;
  return async (req) => {
    served.push(req.url);
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
    return streamed(call++ === hit ? applyDamage(body, damages) : body, cuts, head);
  };
}

const run = (cuts: readonly number[], hit?: number, damages?: readonly Damage[]) => {
  const route = serve(cuts, hit, damages);
  return runJob(options(route), request, route);
};

/** Job ids are random per job; everything else must match. */
const sameJob = (events: Parameters<typeof comparable>[0]) =>
  comparable(events).map((event) => (event.type === "created" ? { ...event, jobId: "pj_*" } : event));

describe("portable engine wire (fuzzed)", () => {
  it("yields the same events for any chunking of every body", async () => {
    served.length = 0;
    const baseline = await run([]);
    // Every kind of body went through the fuzzed route: chat, search and a page.
    expect(served.some((url) => url.endsWith("/chat/completions"))).toBe(true);
    expect(served.some((url) => url.startsWith("http://tavily.test/"))).toBe(true);
    expect(served.some((url) => url.startsWith("https://stats.example.org/"))).toBe(true);
    expectWellEnded(baseline);
    expect(baseline.resultError).toBeUndefined();
    expect(baseline.calls).toBeGreaterThan(2);
    expect(baseline.report?.length).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 20 }), async (cuts) => {
        const outcome = await run(cuts);
        expect(sameJob(outcome.events)).toEqual(sameJob(baseline.events));
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
          expectWellEnded(await run(cuts, hit, damages));
        },
      ),
      { numRuns: RUNS },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(activeTimers()).toBeLessThanOrEqual(before);
  });
});
