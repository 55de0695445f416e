/**
 * The spend cap on a streamed OpenAI deep research job over a real socket: the running
 * estimate (searches counted from web_search_call items, then the streamed text) crosses
 * the cap mid-stream, Sonde POSTs `/cancel` once, and the job ends `incomplete` with a
 * `cost-cap` gap, the partial report and a final cost at or above the cap.
 */
import type { ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { collect, fixture, makeClient, STREAMING_MODEL, textOf } from "./helpers.js";

const transcript = fixture("research-web-search.sse");
const blocks = transcript.split(/(?<=\n\n)/).filter((block) => block.trim() !== "");
const completed = blocks.find((block) => block.startsWith("event: response.completed"))!;
const finalResponse = JSON.parse(completed.slice(completed.indexOf("data: ") + 6)).response;

let loop: Loopback | undefined;
afterEach(async () => {
  await loop?.close();
  loop = undefined;
});

it("crossing the cap mid-stream POSTs one cancel and ends incomplete with the partial report", async () => {
  let held: ServerResponse | undefined;
  loop = await startLoopback((request, response) => {
    if (request.method === "POST" && request.url === "/v1/responses") {
      // Everything but the completion: the response is still running, and billing.
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(blocks.filter((block) => block !== completed).join(""));
      held = response;
      return;
    }
    if (request.method === "POST" && request.url.endsWith("/cancel")) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ ...finalResponse, status: "cancelled", usage: null }));
      held?.end();
      return;
    }
    response.writeHead(404).end();
  });
  const client = makeClient({
    openai: { apiKey: "sk-test-openai-0123456789abcdef", baseURL: `${loop.url}/v1` },
  });
  // Catalog estimate for o4-mini: three searches at $10 per 1,000 and ~170 characters of
  // reasoning summary at $8 per M come to ~$0.0303; the ~450-character report adds ~$0.0009.
  const cap = 0.0306;
  const job = client.research.start({ model: STREAMING_MODEL, query: "q", budget: { maxCostUSD: cap } });
  const events = await collect(job);

  expect(loop.requests.filter((r) => r.url.endsWith("/cancel"))).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  const result = await job.result();
  expect(result.status).toBe("incomplete");
  expect(result.gaps).toEqual([
    { kind: "cost-cap", detail: expect.stringMatching(/cancelled the job server-side/) },
  ]);
  const whole = finalResponse.output.at(-1).content[0].text as string;
  expect(result.report.length).toBeGreaterThan(0);
  expect(result.report.length).toBeLessThan(whole.length);
  expect(whole.startsWith(result.report)).toBe(true);
  expect(textOf(events)).toBe(result.report);
  expect(result.usage.searches).toBe(3);
  expect(result.usage.costUSD).toBeGreaterThanOrEqual(cap);
  expect(result.usage.costSource).toBe("estimate");
});
