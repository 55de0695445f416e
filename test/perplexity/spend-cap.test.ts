/**
 * The spend cap on Perplexity's Agent API: the running estimate (the searches its usage
 * counts, then the streamed text) crosses the cap mid-stream, Sonde POSTs the cancel once,
 * and the job ends `incomplete` with a `cost-cap` gap, the partial report and its cost.
 */
import { expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { framing, sseText } from "../helpers/sse.js";
import { createTestServer, json, sse } from "../helpers/test-server.js";
import { collect, fastRetry, fixtureText, sseEvents } from "./helpers.js";

const BASE = "https://perplexity.test";
const server = createTestServer();

const sample = sseEvents(fixtureText("perplexity", "agent-sample.sse"));
const RID = "resp_d60f3e03-57e0-4048-994f-69b29a6d2ce7";
const errors = JSON.parse(fixtureText("perplexity", "agent-errors.json")) as Record<
  string,
  { status: number; body: unknown }
>;
const cancelled = (
  JSON.parse(fixtureText("perplexity", "agent-cancelled.json")) as { body: Record<string, unknown> }
).body;

it("crossing the cap mid-stream POSTs one cancel and ends incomplete with the partial report", async () => {
  const running = sample.filter((event) => event.type !== "response.completed");
  let close = () => {};
  const cancelled_ = new Promise<void>((resolve) => {
    close = resolve;
  });
  const paths: string[] = [];
  const body = sseText(running, framing.perplexity);
  server.route({
    [`ALL ${BASE}/*`]: (call) => {
      const path = `${call.method} ${call.url.pathname}`;
      paths.push(path);
      // The run goes on (and bills) until it is cancelled.
      if (path === "POST /v1/agent") return sse(body, { gate: { after: running.length, until: cancelled_ } });
      if (path === `POST /v1/agent/${RID}/cancel`) {
        setTimeout(close, 1);
        return json(errors.cancelAck!.body, { status: errors.cancelAck!.status });
      }
      if (path === `GET /v1/agent/${RID}`) return json({ ...cancelled, id: RID });
      return json({ error: "unscripted" }, { status: 500 });
    },
  });
  const client = new Sonde({
    perplexity: { apiKey: "pplx-test-0123456789abcdef", baseURL: BASE, cancelWaitMs: 2_000 },
    retry: fastRetry,
    env: {},
  });
  // Catalog estimate: one search at $2.50 per 1,000 and a sentence of thoughts at $0.5 per M
  // output tokens come to ~$0.002503; the first report delta takes the job past the cap.
  const cap = 0.002505;
  const job = client.research.start({ model: "perplexity:medium", query: "q", budget: { maxCostUSD: cap } });
  const events = await collect(job);
  expect(paths.filter((p) => p.endsWith("/cancel"))).toHaveLength(1);
  expect(paths.filter((p) => p === "POST /v1/agent")).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  const result = await job.result();
  expect(result.gaps).toEqual([
    { kind: "cost-cap", detail: expect.stringMatching(/cancelled the job server-side/) },
  ]);
  expect(result.report).toBe("Builder is $20/month flat ");
  expect(result.usage.costUSD).toBeGreaterThanOrEqual(cap);
});
