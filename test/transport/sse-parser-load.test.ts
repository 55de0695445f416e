/**
 * The SSE parser loads with the first stream. A streaming job awaits it before its
 * job-creating request, so a parser that cannot load (a bundle that dropped its chunk) fails
 * the job before anything is sent, never after a job may be running and billing; a poll-only
 * job never needs it.
 */
import { expect, it, vi } from "vitest";
import { MissingDependencyError, Sonde } from "../../src/index.js";
import { createTestServer, jsonFixture, sse } from "../helpers/test-server.js";

vi.mock("eventsource-parser", () => {
  throw new Error("Cannot find module 'eventsource-parser'");
});

const server = createTestServer();
const BASE = "https://api.openai.test/v1";
const client = () =>
  new Sonde({
    openai: { apiKey: "sk-test-parser-load", baseURL: BASE },
    perplexity: { apiKey: "pplx-test-parser-load", baseURL: "https://perplexity.test" },
    gemini: { apiKey: "AIzaSyParserLoad0123", baseURL: "https://gemini.test/v1beta" },
    openrouter: { apiKey: "sk-or-v1-parser-load", baseURL: "https://openrouter.test/api/v1" },
    clock: () => new Date("2026-06-01T00:00:00Z"),
    retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 },
    env: {},
  });

const engines = [
  { model: "openai:o4-mini-deep-research", route: `POST ${BASE}/responses` },
  { model: "perplexity:medium", route: "POST https://perplexity.test/v1/agent" },
  { model: "gemini:deep-research-preview-04-2026", route: "POST https://gemini.test/v1beta/interactions" },
  {
    model: "openrouter:perplexity/sonar-deep-research",
    route: "POST https://openrouter.test/api/v1/chat/completions",
  },
];

it.each(engines)(
  "$model: a stream whose parser cannot load fails before the job is submitted",
  async ({ model, route }) => {
    server.route({ [route]: sse("data: {}\n\n") });
    const job = client().research.start({ model, query: "q" });
    const error = await job.result().catch((e: unknown) => e);
    expect(MissingDependencyError.isInstance(error)).toBe(true);
    expect((error as MissingDependencyError).packageName).toBe("eventsource-parser");
    expect((error as Error).message).toContain("nothing was sent");
    expect(server.calls).toHaveLength(0);
  },
);

it("a poll-only job never needs the parser", async () => {
  server.route({
    [`POST ${BASE}/responses`]: jsonFixture("openai/poll/pro.completed.json"),
  });
  const result = await client().research.start({ model: "openai:gpt-5.5-pro", query: "q" }).result();
  expect(result.status).toBe("completed");
});
