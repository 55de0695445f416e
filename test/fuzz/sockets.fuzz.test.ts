/**
 * The streaming engines over real sockets on 127.0.0.1: damaged transcripts, cut or
 * reset mid-stream at random bytes, end every job with exactly one `done` and typed
 * errors only, and leave no socket or timer open behind them.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import {
  activeTimers,
  applyDamage,
  type Damage,
  damage,
  expectWellEnded,
  fixtureBytes,
  RUNS,
  runJob,
} from "./harness.js";

interface Plan {
  body: Uint8Array;
  /** Reset the connection after this many bytes instead of ending the response. */
  resetAt: number | undefined;
}

let plan: Plan = { body: new Uint8Array(), resetAt: undefined };
let loop: Loopback;
beforeAll(async () => {
  loop = await startLoopback((request, response) => {
    // Only the create request streams; a resume or poll finds the provider down.
    if (request.method !== "POST") {
      response.writeHead(503, { "content-type": "application/json", connection: "close" });
      response.end(JSON.stringify({ error: { message: "fuzz: unavailable" } }));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", connection: "close" });
    response.flushHeaders();
    const { body, resetAt } = plan;
    if (resetAt === undefined) return void response.end(body);
    response.write(body.subarray(0, resetAt % (body.length + 1)), () =>
      setImmediate(() => response.socket?.destroy()),
    );
  });
});
afterAll(() => loop.close());

const sockets = () => process.getActiveResourcesInfo().filter((kind) => /TCP/i.test(kind)).length;

const engines = [
  {
    name: "openai",
    key: "openai",
    path: "/v1",
    model: "openai:o4-mini-deep-research",
    fixture: "openai/research-web-search.sse",
  },
  {
    name: "gemini",
    key: "gemini",
    path: "/v1beta",
    model: "gemini:deep-research-preview-04-2026",
    fixture: "gemini/research.sse",
  },
  {
    name: "perplexity",
    key: "perplexity",
    path: "",
    model: "perplexity:medium",
    fixture: "perplexity/agent-sample.sse",
  },
  {
    name: "openrouter",
    key: "openrouter",
    path: "/api/v1",
    model: "openrouter:perplexity/sonar-deep-research",
    fixture: "openrouter/sonar-deep-research.sse",
  },
] as const;

describe("streaming engines over loopback sockets (fuzzed)", () => {
  it("end every cut or damaged stream with one done, closing every socket and timer", async () => {
    const baseSockets = sockets();
    const baseTimers = activeTimers();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...engines),
        fc.array(damage, { maxLength: 2 }),
        fc.option(fc.nat(), { nil: undefined }),
        async (engine, damages: Damage[], resetAt) => {
          plan = { body: applyDamage(fixtureBytes(engine.fixture), damages), resetAt };
          const options = {
            [engine.key]: { apiKey: `sk-test-fuzz-${engine.key}`, baseURL: `${loop.url}${engine.path}` },
            clock: () => new Date("2026-06-01T00:00:00Z"),
          };
          expectWellEnded(await runJob(options, { model: engine.model, query: "fuzz" }, "network"));
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    // Closed connections leave the handle list within a tick or two.
    for (let i = 0; i < 300 && sockets() > baseSockets; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sockets(), process.getActiveResourcesInfo().join(",")).toBeLessThanOrEqual(baseSockets);
    expect(activeTimers()).toBeLessThanOrEqual(baseTimers);
  });
});
