/**
 * The spend cap on OpenRouter, which has no cancel endpoint and keeps billing upstream:
 * the running estimate from the streamed text crosses the cap, Sonde closes the connection
 * (never a second POST), and the job ends `incomplete` with a `cost-cap` gap that says
 * billing may continue, the partial report and its estimated cost.
 */
import type { ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { collect, fastRetry, fixture, KEY } from "./helpers.js";

const model = "openrouter:perplexity/sonar-deep-research";
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The fixture up to (not including) the chunk that carries usage and the finish. */
const frames = fixture("sonar-deep-research.sse").split("\n\n");
const running = `${frames
  .slice(
    0,
    frames.findIndex((frame) => frame.includes('"finish_reason":"stop"')),
  )
  .join("\n\n")}\n\n`;

it("crossing the cap closes the connection, says billing may continue, and keeps the partial report", async () => {
  let closed!: () => void;
  const disconnected = new Promise<void>((resolve) => {
    closed = resolve;
  });
  let held: ServerResponse | undefined;
  server = await startLoopback((_request, response) => {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(running);
    // Upstream keeps generating; only the client's disconnect ends this response.
    response.on("close", () => closed());
    held = response;
  });
  const client = new Sonde({ openrouter: { apiKey: KEY, baseURL: server.url }, retry: fastRetry, env: {} });
  // Catalog estimate at $8 per M: the reasoning streamed first comes to ~$0.0002; the first
  // sentence of the report takes the job past the cap.
  const cap = 0.00025;
  const job = client.research.start({ model, query: "q", budget: { maxCostUSD: cap } });
  const events = await collect(job);
  await disconnected;
  expect(held?.writableEnded).toBe(false);
  expect(server.requests).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  const result = await job.result();
  expect(result.gaps).toEqual([
    {
      kind: "cost-cap",
      detail: expect.stringMatching(/Sonde closed the connection\..*Billing may continue/),
    },
  ]);
  expect(result.gaps[0]!.detail).toMatch(/does not stop on a disconnect/);
  expect(result.report).toBe("Due-diligence duties were postponed to 2027");
  expect(result.usage.costUSD).toBeGreaterThanOrEqual(cap);
  expect(result.usage.costSource).toBe("estimate");
});
