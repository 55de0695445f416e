/**
 * The spend cap on a streamed Perplexity run over a real socket: the running estimate
 * (searches at the catalog's tool fee, as the reasoning trace reports them) crosses the
 * cap, Sonde POSTs `/v1/agent/{id}/cancel` once, polls the acknowledged cancel to
 * `cancelled`, and the job ends `incomplete` with a `cost-cap` gap and an estimate.
 */
import type { ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { collect, fastRetry, fixtureText, sseEvents } from "./helpers.js";

const events = sseEvents(fixtureText("perplexity", "agent-sample.sse"));
const cancelled = (
  JSON.parse(fixtureText("perplexity", "agent-cancelled.json")) as { body: Record<string, unknown> }
).body;
const RID = "resp_d60f3e03-57e0-4048-994f-69b29a6d2ce7";

let loop: Loopback | undefined;
afterEach(async () => {
  await loop?.close();
  loop = undefined;
});

it("crossing the cap mid-stream POSTs one cancel, polls it to cancelled, and ends incomplete", async () => {
  let held: ServerResponse | undefined;
  loop = await startLoopback((request, response) => {
    if (request.method === "POST" && request.url === "/v1/agent") {
      // Up to the first delta: the run is still going, and billing.
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(
        events
          .slice(0, 6)
          .map((e) => `data: ${JSON.stringify(e)}\n\n`)
          .join(""),
      );
      held = response;
      return;
    }
    if (request.method === "POST" && request.url === `/v1/agent/${RID}/cancel`) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ response_id: RID, status: "cancelling" }));
      return;
    }
    if (request.method === "GET" && request.url === `/v1/agent/${RID}`) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ...cancelled, id: RID }));
      held?.end();
      return;
    }
    response.writeHead(404).end();
  });
  const client = new Sonde({
    perplexity: { apiKey: "pplx-test-0123456789abcdef", baseURL: loop.url },
    retry: fastRetry,
    env: {},
  });
  // One search at $2.50 per 1,000 is $0.0025: past the cap before the report is written.
  const cap = 0.002;
  const job = client.research.start({ model: "perplexity:medium", query: "q", budget: { maxCostUSD: cap } });
  const seen = await collect(job);

  expect(loop.requests.filter((r) => r.url.endsWith("/cancel"))).toHaveLength(1);
  expect(loop.requests.filter((r) => r.method === "POST" && r.url === "/v1/agent")).toHaveLength(1);
  expect(seen.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  const result = await job.result();
  expect(result.gaps).toEqual([
    { kind: "cost-cap", detail: expect.stringMatching(/cancelled the job server-side/) },
  ]);
  expect(result.usage.costUSD).toBeGreaterThanOrEqual(cap);
  expect(result.usage.costSource).toBe("estimate");
});
