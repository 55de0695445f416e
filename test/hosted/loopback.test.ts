/**
 * The hosted job API over real sockets: the cancel race (completion wins, 409, charged
 * and uncharged cancels) driven through job.cancel() on a live job, Retry-After between
 * polls, and an invoke that gets no answer.
 */
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { IndeterminateSubmissionError, type ResearchEvent, Sonde } from "../../src/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { fastRetry, transcript } from "../perplexity/helpers.js";

const KEY = "hosted-key-0123456789abcdef";
const model = "hosted:agents.deep_research";
const query = "What changed in EU battery regulation in 2025?";
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const client = (baseURL: string, idleTimeoutMs = 2_000) =>
  new Sonde({ hosted: { apiKey: KEY, baseURL }, retry: fastRetry, idleTimeoutMs, env: {} });

const { exchanges } = transcript("hosted", "invoke-completed.json");
const queued = exchanges[0]!.response.body;
const running = exchanges[1]!.response.body;
const completed = exchanges[2]!.response.body;

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

type State = "queued" | "running" | "completed" | "canceled";

/**
 * A hosted service whose job runs on the first poll; `onDelete` decides what a DELETE
 * does (and may change the job's fate); `cancelResult` is what a canceled job reports.
 */
async function hostedServer(options: {
  onDelete: (state: State) => { status: number; next: State };
  cancelResult?: unknown;
}) {
  let state: State = "queued";
  return startLoopback((request, response) => {
    if (request.method === "POST") return json(response, 200, queued);
    if (request.method === "DELETE") {
      const { status, next } = options.onDelete(state);
      state = next;
      return json(
        response,
        status,
        status === 409
          ? { error: { message: `Job is already ${state}` } }
          : { job_id: "job_01HZX3K9Q7", status: state },
      );
    }
    if (state === "queued") {
      state = "running";
      return json(response, 200, running);
    }
    if (state === "running") return json(response, 200, running);
    if (state === "completed") return json(response, 200, completed);
    return json(response, 200, {
      job_id: "job_01HZX3K9Q7",
      status: "canceled",
      ...(options.cancelResult !== undefined && { result: options.cancelResult }),
    });
  });
}

/** Iterates a job and cancels it at its first `running` status. */
async function cancelWhileRunning(sonde: Sonde) {
  const job = sonde.research.start({ model, query });
  const events: ResearchEvent[] = [];
  let outcome: Awaited<ReturnType<typeof job.cancel>> | undefined;
  for await (const event of job) {
    events.push(event);
    if (event.type === "status" && event.status === "running" && !outcome) outcome = await job.cancel();
  }
  return { job, events, outcome: outcome! };
}

describe("hosted cancel race over a real socket", () => {
  it("completion wins: the DELETE gets 409, cancel() answers already-terminal, and the job still delivers its report and charge", async () => {
    server = await hostedServer({ onDelete: () => ({ status: 409, next: "completed" }) });
    const { job, events, outcome } = await cancelWhileRunning(client(server.url));
    expect(outcome).toMatchObject({ outcome: "already-terminal", finalStatus: "completed" });
    expect(outcome.detail).toMatch(/completion won the race/);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const result = await job.result();
    expect(result.report).toBe("Due-diligence duties were postponed to 2027 [1].");
    expect(result.usage).toMatchObject({ costUSD: 4.12, costSource: "provider" });
    expect(server.requests.filter((r) => r.method === "DELETE")).toHaveLength(1);
  });

  it("completion wins after the DELETE was accepted: the poll finds it completed, so already-terminal", async () => {
    server = await hostedServer({ onDelete: () => ({ status: 200, next: "completed" }) });
    const { job, outcome } = await cancelWhileRunning(client(server.url));
    expect(outcome).toMatchObject({ outcome: "already-terminal", finalStatus: "completed" });
    expect((await job.result()).status).toBe("completed");
  });

  it("a charged cancel: cancelled, and the charge for work already done is the job's cost", async () => {
    server = await hostedServer({
      onDelete: () => ({ status: 200, next: "canceled" }),
      cancelResult: { charge_usd: 1.37 },
    });
    const { job, events, outcome } = await cancelWhileRunning(client(server.url));
    expect(outcome).toMatchObject({
      outcome: "cancelled",
      finalStatus: "cancelled",
      usage: { costUSD: 1.37, costSource: "provider" },
    });
    expect(events.slice(-3)).toMatchObject([
      { type: "usage", usage: { costUSD: 1.37, costSource: "provider" } },
      { type: "status", status: "cancelled" },
      { type: "done", status: "cancelled" },
    ]);
    const result = await job.result();
    expect(result.status).toBe("cancelled");
    expect(result.usage).toMatchObject({ costUSD: 1.37, costSource: "provider" });
    expect(server.requests.map((r) => r.method)).toContain("DELETE");
  });

  it("an uncharged cancel: cancelled, and no charge", async () => {
    server = await hostedServer({ onDelete: () => ({ status: 200, next: "canceled" }) });
    const { job, events, outcome } = await cancelWhileRunning(client(server.url));
    expect(outcome).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect(events.some((e) => e.type === "usage")).toBe(false);
    const result = await job.result();
    expect(result.status).toBe("cancelled");
    expect(result.usage.costUSD).toBe(0);
  });

  it("cancel of a job that already finished: DELETE answers 409, a final GET reads the status → already-terminal", async () => {
    server = await startLoopback((request, response) => {
      if (request.method === "POST") return json(response, 200, queued);
      if (request.method === "DELETE")
        return json(response, 409, { error: { message: "Job is already completed" } });
      return json(response, 200, completed);
    });
    const sonde = client(server.url);
    const job = sonde.research.start({ model, query });
    await job.result();
    const outcome = await sonde.research.cancel(job.toRef());
    expect(outcome).toMatchObject({ outcome: "already-terminal", finalStatus: "completed" });
    expect(outcome.usage).toMatchObject({ costUSD: 4.12, costSource: "provider" });
    expect(server.requests.map((r) => r.method).slice(-2)).toEqual(["DELETE", "GET"]);
  });
});

describe("hosted polling and invoke over a real socket", () => {
  it("waits at least Retry-After between polls", async () => {
    const polls: number[] = [];
    server = await startLoopback((request, response) => {
      if (request.method === "POST") return json(response, 200, queued);
      polls.push(performance.now());
      if (polls.length === 1) return json(response, 200, running, { "Retry-After": "1" });
      return json(response, 200, completed);
    });
    const result = await client(server.url).research.start({ model, query }).result();
    expect(result.status).toBe("completed");
    expect(polls).toHaveLength(2);
    expect(polls[1]! - polls[0]!).toBeGreaterThanOrEqual(990);
  });

  it("an invoke that gets no answer is IndeterminateSubmissionError and is never repeated", async () => {
    server = await startLoopback(() => {
      // accept, never answer
    });
    const job = client(server.url, 150).research.start({ model, query });
    const error = await job.result().catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/did not resend it/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests).toHaveLength(1);
  });
});
