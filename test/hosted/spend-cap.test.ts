/**
 * The spend cap on the hosted job API, which reports no running cost (poll-only) but
 * quotes the job when it accepts it: a quote above the cap cancels the job at once (one
 * DELETE) and ends it `incomplete` with a `cost-cap` gap and the charge the service
 * reports; a quote under the cap is checked again, honestly, against the final charge.
 */
import type { ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { fastRetry, transcript } from "../perplexity/helpers.js";

const KEY = "hosted-key-0123456789abcdef";
const model = "hosted:agents.deep_research";
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const { exchanges } = transcript("hosted", "invoke-completed.json");
const queued = exchanges[0]!.response.body as Record<string, unknown>;
const running = exchanges[1]!.response.body;
const completed = exchanges[2]!.response.body;

function json(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

async function hosted({ quote = true } = {}) {
  let state: "running" | "completed" | "canceled" = "running";
  let polls = 0;
  const { estimated_cost_usd: _quote, ...unquoted } = queued;
  return startLoopback((request, response) => {
    if (request.method === "POST") return json(response, 200, quote ? queued : unquoted);
    if (request.method === "DELETE") {
      state = "canceled";
      return json(response, 200, { job_id: queued.job_id, status: "canceled" });
    }
    if (state === "canceled")
      return json(response, 200, { job_id: queued.job_id, status: "canceled", result: { charge_usd: 0.37 } });
    if (++polls >= 2) state = "completed";
    return json(response, 200, state === "completed" ? completed : running);
  });
}

const client = (baseURL: string) =>
  new Sonde({ hosted: { apiKey: KEY, baseURL, cancelWaitMs: 5_000 }, retry: fastRetry, env: {} });

it("a quote above the cap cancels the job once and reports the service's charge", async () => {
  expect(queued.estimated_cost_usd).toBe(6);
  server = await hosted();
  const job = client(server.url).research.start({ model, query: "q", budget: { maxCostUSD: 5 } });
  const result = await job.result();
  expect(server.requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
  expect(server.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  expect(result.status).toBe("incomplete");
  expect(result.gaps).toEqual([
    {
      kind: "cost-cap",
      detail: expect.stringMatching(
        /\$5\.00 was crossed \(\$6\.00, as the provider quoted it.*cancelled the job server-side/,
      ),
    },
  ]);
  // The honest final figure is what the service charged for the cancelled job.
  expect(result.usage).toMatchObject({ costUSD: 0.37, costSource: "provider" });
});

it("a cap checked at the end: the job completes, its charge above the cap is reported with a cost-cap gap, and a warning logged", async () => {
  // A service that quotes nothing: the cap can only meet the final charge (4.12).
  server = await hosted({ quote: false });
  const request = { model, query: "q", budget: { maxCostUSD: 4 } };
  const warned: string[] = [];
  const sonde = new Sonde({
    hosted: { apiKey: KEY, baseURL: server.url },
    retry: fastRetry,
    env: {},
    logger: { warn: (message) => warned.push(message) },
  });
  expect(sonde.research.validate(request).adjustments[0]!.reason).toMatch(
    /no running cost before the job ends/,
  );
  const result = await sonde.research.start(request).result();
  expect(server.requests.filter((r) => r.method === "DELETE")).toHaveLength(0);
  expect(result.status).toBe("completed");
  expect(result.usage).toMatchObject({ costUSD: 4.12, costSource: "provider" });
  // Not only a log line: the result says the job went past its cap, and why it could not stop.
  expect(result.gaps).toEqual([
    {
      kind: "cost-cap",
      detail: expect.stringMatching(
        /\$4\.00 was crossed \(\$4\.12, as the provider charged it\) at the end: the figures that came with the job's end put it past the cap.*The job completed above its cap/,
      ),
    },
  ]);
  expect(warned).toEqual(["the job ended above its spend cap"]);
});

it("a consumer that stops at the terminal status still gets the above-cap gap on the result", async () => {
  server = await hosted({ quote: false });
  const job = client(server.url).research.start({ model, query: "q", budget: { maxCostUSD: 4 } });
  for await (const event of job) if (event.type === "status" && event.status === "completed") break;
  const result = await job.result();
  expect(result.status).toBe("completed");
  expect(result.gaps).toEqual([
    { kind: "cost-cap", detail: expect.stringMatching(/completed above its cap/) },
  ]);
});
