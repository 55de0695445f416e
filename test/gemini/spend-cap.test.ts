/**
 * The spend cap on Gemini, which reports no cost: the running estimate from the streamed
 * text crosses the cap mid-stream, Sonde POSTs the cancel once, and the job ends
 * `incomplete` with a `cost-cap` gap, the partial report and its estimated cost.
 */
import { expect, it } from "vitest";
import { createTestServer, json, sse } from "../helpers/test-server.js";
import {
  blocks,
  client,
  collect,
  errorResponse,
  fixture,
  fixtureJson,
  geminiServer,
  reportOf,
  running,
} from "./helpers.js";

const server = createTestServer();

const research = fixture("research.sse");
const stored = fixtureJson("research.interaction.json");
const model = "gemini:deep-research-preview-04-2026";

it("crossing the cap mid-stream cancels once and keeps the partial report", async () => {
  const all = blocks(research);
  const beforeEnd = all.filter((block) => !block.includes("interaction.completed"));
  let close!: () => void;
  const cancelled = new Promise<void>((resolve) => {
    close = resolve;
  });
  const { handlers, requests } = geminiServer({
    // The interaction keeps running (and billing) until it is cancelled.
    create: () => sse(beforeEnd.join(""), { gate: { after: beforeEnd.length, until: cancelled } }),
    cancel: () => {
      setTimeout(() => close(), 1);
      return json({ ...running(stored), status: "cancelled" });
    },
  });
  server.use(...handlers);
  // Estimated from catalog prices: two searches ($14 per 1,000) and ~220 characters of
  // thought summaries ($12 per M output tokens) come to ~$0.0287; the ~220 characters of
  // report add ~$0.0007, so the cap is crossed part-way through the report.
  const cap = 0.029;
  const job = client().research.start({ model, query: "q", budget: { maxCostUSD: cap } });
  const events = await collect(job);
  expect(requests.filter((r) => r.url.pathname.endsWith("/cancel"))).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  const result = await job.result();
  expect(result.status).toBe("incomplete");
  expect(result.gaps).toEqual([
    { kind: "cost-cap", detail: expect.stringMatching(/cancelled the job server-side/) },
  ]);
  expect(result.report.length).toBeGreaterThan(0);
  expect(reportOf(events)).toBe(result.report);
  // A prefix of what the uncapped job would have reported.
  server.use(...geminiServer({ create: () => sse(research) }).handlers);
  const whole = (await client().research.start({ model, query: "q" }).result()).report;
  expect(result.report.length).toBeLessThan(whole.length);
  expect(whole.startsWith(result.report)).toBe(true);
  expect(result.usage.costUSD).toBeGreaterThanOrEqual(cap);
  expect(result.usage.costSource).toBe("estimate");
});

it("the interaction finished before the cap's cancel: the job completes whole, and a cost-cap gap says it went past the cap", async () => {
  const all = blocks(research);
  const beforeEnd = all.filter((block) => !block.includes("interaction.completed"));
  let release!: () => void;
  const finished = new Promise<void>((resolve) => {
    release = resolve;
  });
  let serverStatus = "in_progress";
  const { handlers, requests } = geminiServer({
    create: () => sse(all.join(""), { gate: { after: beforeEnd.length, until: finished } }),
    cancel: () => {
      // The agent wrote its last words while the cancel was on its way.
      serverStatus = "completed";
      setTimeout(() => release(), 1);
      return errorResponse("error-cancel-not-running.json", 400);
    },
    get: () => json(serverStatus === "completed" ? stored : running(stored)),
  });
  server.use(...handlers);
  const job = client().research.start({ model, query: "q", budget: { maxCostUSD: 0.029 } });
  const events = await collect(job);
  expect(requests.filter((r) => r.url.pathname.endsWith("/cancel"))).toHaveLength(1);
  const result = await job.result();
  expect(result.status).toBe("completed");
  const gap = {
    kind: "cost-cap",
    detail: expect.stringMatching(
      /\$0\.0290 was crossed .* the provider finished the job before Sonde's cancel reached it\. The job completed above its cap/,
    ),
  };
  expect(result.gaps).toEqual([gap]);
  // Delivered as an event too, just before `done`, so a stream consumer sees it.
  expect(events.slice(-2)).toMatchObject([
    { type: "gap", gap },
    { type: "done", status: "completed" },
  ]);
  server.use(...geminiServer({ create: () => sse(research) }).handlers);
  expect(result.report).toBe((await client().research.start({ model, query: "q" }).result()).report);
});
