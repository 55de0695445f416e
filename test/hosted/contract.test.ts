/**
 * Hosted job API contract: transcripts from test/fixtures/hosted/ replayed in strict
 * order over msw, driven through the public client.
 */
import { describe, expect, it } from "vitest";
import { handlers } from "../../providers/hosted/testing.js";
import {
  AuthenticationError,
  IndeterminateSubmissionError,
  InsufficientCreditError,
  InvalidRequestError,
  type JobRef,
  ProviderJobError,
  ProviderUnavailableError,
  RateLimitError,
  type ResearchRequest,
  Sonde,
  SondeError,
  UnsupportedOptionError,
} from "../../src/index.js";
import { fixtureJson } from "../helpers/fixtures.js";
import { createTestServer, empty, json, networkError } from "../helpers/test-server.js";
import { collect, fastRetry, replay, transcript } from "../perplexity/helpers.js";

const KEY = "hosted-key-0123456789abcdef";
const BASE = "https://hosted.test";
const model = "hosted:agents.deep_research";
const query = "What changed in EU battery regulation in 2025?";

const server = createTestServer();
const INVOKE = `POST ${BASE}/v1/agents/agents.deep_research/invoke`;
const JOB = `GET ${BASE}/v1/jobs/job_01HZX3K9Q7`;

const client = (retry = fastRetry) =>
  new Sonde({ hosted: { apiKey: KEY, baseURL: BASE }, retry, idleTimeoutMs: 2_000, env: {} });

const ref = (jobId = "job_01HZX3K9Q7"): JobRef => ({
  v: 1,
  provider: "hosted",
  model,
  jobId,
  createdAt: "2026-07-01T10:00:00.000Z",
  resume: { pollUrl: `/v1/jobs/${jobId}`, reservedUSD: 6 },
});

describe("hosted job API: invoke, poll, result", () => {
  it("invokes once, surfaces the reservation on status events, polls, then delivers the report, citations and the final charge", async () => {
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    const seen = replay(server, BASE, exchanges);
    const job = client().research.start({ model, query });
    const events = await collect(job);
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(
      exchanges.map((e) => `${e.request.method} ${e.request.path}`),
    );
    expect(seen[0]!.body).toEqual(exchanges[0]!.request.body);
    expect(seen[0]!.headers.get("authorization")).toBe(`Bearer ${KEY}`);
    expect(events.map((e) => e.type)).toEqual([
      "created",
      "status",
      "status",
      "text",
      "citation",
      "usage",
      "status",
      "done",
    ]);
    expect(events[0]).toMatchObject({ jobId: "job_01HZX3K9Q7", provider: "hosted", model });
    expect(events[1]).toMatchObject({ type: "status", status: "queued", reservedUSD: 6 });
    expect(events[2]).toMatchObject({ type: "status", status: "running", reservedUSD: 6 });
    const result = await job.result();
    expect(result).toMatchObject({
      status: "completed",
      report: "Due-diligence duties were postponed to 2027 [1].",
    });
    expect(result.citations).toEqual([
      {
        title: "EU battery regulation timeline",
        url: "https://example.org/eu-battery-regulation-timeline",
        snippet: "The Commission proposed to postpone ...",
      },
    ]);
    expect(result.usage).toMatchObject({ costUSD: 4.12, costSource: "provider" });
    const jobRef = job.toRef();
    expect(jobRef.resume).toEqual({ pollUrl: "/v1/jobs/job_01HZX3K9Q7", reservedUSD: 6 });
    expect(JSON.stringify(jobRef)).not.toContain(KEY);
  });

  it("folds instructions, the as-of date and the output form into the prompt", async () => {
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    const seen = replay(server, BASE, exchanges);
    await client()
      .research.start({
        model,
        query,
        instructions: "Primary sources only.",
        asOf: "2025-12-31",
        output: "a one-page brief",
      })
      .result();
    expect(seen[0]!.body).toEqual({
      inputs: {
        prompt: `${query}\n\nPrimary sources only.\n\nResearch as of 2025-12-31: treat that date as today.\n\nWrite the report as: a one-page brief`,
        provider: "perplexity",
      },
    });
  });

  it("a failed job becomes an error event and a failed job with the service's reason", async () => {
    replay(server, BASE, transcript("hosted", "invoke-failed.json").exchanges);
    const job = client().research.start({ model, query });
    const events = await collect(job);
    expect(events.slice(-3)).toMatchObject([
      { type: "error", error: { code: "upstream_error", retryable: false } },
      { type: "status", status: "failed" },
      { type: "done", status: "failed" },
    ]);
    const error = await job.result().catch((e: unknown) => e);
    expect(ProviderJobError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("The research provider returned an error");
  });

  it("get(ref) is one poll and returns the reservation while the job runs, the report and charge once done", async () => {
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    let seen = replay(server, BASE, [exchanges[1]!]);
    expect(await client().research.get(ref())).toMatchObject({ status: "running", reservedUSD: 6 });
    expect(seen).toHaveLength(1);
    server.reset();
    seen = replay(server, BASE, [exchanges[2]!]);
    const done = await client().research.get(ref());
    expect(done).toMatchObject({
      status: "completed",
      report: "Due-diligence duties were postponed to 2027 [1].",
      usage: { costUSD: 4.12, costSource: "provider" },
    });
    expect(done.reservedUSD).toBeUndefined();
    expect(seen).toHaveLength(1);
  });

  it("reads poll_url relative to a base URL with a path, and never polls (or sends the key to) another origin", async () => {
    const gateway = "https://gateway.test/hosted";
    server.use(...handlers({ baseURL: gateway, report: "Behind a gateway." }));
    const viaGateway = new Sonde({ hosted: { apiKey: KEY, baseURL: gateway }, retry: fastRetry, env: {} });
    expect((await viaGateway.research.start({ model, query }).result()).report).toBe("Behind a gateway.");

    server.reset();
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    const elsewhere: string[] = [];
    server.route({
      [INVOKE]: json({
        ...(exchanges[0]!.response.body as object),
        poll_url: "https://elsewhere.test/v1/jobs/job_01HZX3K9Q7",
      }),
      [JOB]: json(exchanges[2]!.response.body),
      "ALL https://elsewhere.test/*": (call) => {
        elsewhere.push(call.url.href);
        return json({}, { status: 500 });
      },
    });
    expect((await client().research.start({ model, query }).result()).status).toBe("completed");
    expect(elsewhere).toEqual([]);
  });

  it("attach(ref) resumes polling without announcing the job again", async () => {
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    replay(server, BASE, exchanges.slice(1));
    const job = client().research.attach(ref());
    const events = await collect(job);
    expect(events.map((e) => e.type)).toEqual(["status", "text", "citation", "usage", "status", "done"]);
    expect(events[0]).toMatchObject({ status: "running", reservedUSD: 6 });
    expect((await job.result()).usage.costUSD).toBe(4.12);
  });
});

describe("hosted job API: errors", () => {
  const { responses } = fixtureJson("hosted/errors.json") as unknown as {
    responses: Record<string, { status: number; headers?: Record<string, string>; body: unknown }>;
  };

  const invokeAnswering = (status: string) => {
    const r = responses[status]!;
    server.route({ [INVOKE]: json(r.body, { status: r.status, ...(r.headers && { headers: r.headers }) }) });
    return () => server.callsTo(INVOKE).length;
  };

  const cases = [
    ["401", AuthenticationError, /Not authenticated.*Check the hosted API key/],
    ["403", AuthenticationError, /Not permitted/],
    ["402", InsufficientCreditError, /Insufficient credit.*Add credit/],
    ["422", InvalidRequestError, /inputs\.prompt is required/],
  ] as const;
  for (const [status, type, message] of cases) {
    it(`${status} → ${type.errorName}, invoked once`, async () => {
      const posts = invokeAnswering(status);
      const error = await client()
        .research.start({ model, query })
        .result()
        .catch((e: unknown) => e);
      expect(type.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain(KEY);
      expect(posts()).toBe(1);
    });
  }

  it("the one-job-in-flight 429 → RateLimitError with retryAfterMs, not retryable, invoked once despite a retry budget", async () => {
    const posts = invokeAnswering("429");
    const error = await client({ attempts: 3, minDelayMs: 1, maxDelayMs: 60_000 })
      .research.start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect((error as RateLimitError).retryAfterMs).toBe(30_000);
    expect((error as Error).message).toMatch(
      /Only one job may be in flight.*poll the running job.*cancel it/,
    );
    expect(error).toMatchObject({ retryable: false });
    expect(posts()).toBe(1);
  });

  it("503 with no job id is retried (nothing was created) and then succeeds", async () => {
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    const unavailable = responses["503"]!;
    server.route({
      [INVOKE]: [
        json(unavailable.body, { status: unavailable.status }),
        json(exchanges[0]!.response.body, { status: exchanges[0]!.response.status }),
      ],
      [JOB]: json(exchanges[2]!.response.body),
    });
    expect((await client().research.start({ model, query }).result()).status).toBe("completed");
    expect(server.callsTo(INVOKE)).toHaveLength(2);
  });

  it("503 that names a job id is not invoked again: the job is followed", async () => {
    const { exchanges } = transcript("hosted", "invoke-completed.json");
    server.route({
      [INVOKE]: json(exchanges[0]!.response.body, { status: 503 }),
      [JOB]: json(exchanges[2]!.response.body),
    });
    expect((await client().research.start({ model, query }).result()).status).toBe("completed");
    expect(server.callsTo(INVOKE)).toHaveLength(1);
  });

  for (const status of [500, 502, 504]) {
    it(`a ${status} on invoke (the job may have been created behind it) is IndeterminateSubmissionError and is not invoked again`, async () => {
      server.route({ [INVOKE]: json({ error: { message: "Gateway Timeout" } }, { status }) });
      const error = await client()
        .research.start({ model, query })
        .result()
        .catch((e: unknown) => e);
      expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ status, retryable: false });
      expect((error as Error).message).toMatch(/may or may not have started.*did not (invoke again|resend)/);
      expect(server.callsTo(INVOKE)).toHaveLength(1);
    });
  }

  it("503s that never stop fail with ProviderUnavailableError after the retry budget", async () => {
    const posts = invokeAnswering("503");
    const error = await client()
      .research.start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(ProviderUnavailableError.isInstance(error)).toBe(true);
    expect(posts()).toBe(1 + fastRetry.attempts);
  });

  it("rejects what the endpoint cannot take before anything is sent, and a missing base URL with a clear error", () => {
    const posts = invokeAnswering("422");
    const sonde = client();
    const rejected: [string, Partial<ResearchRequest>][] = [
      ["tools", { tools: ["web_search"] }],
      ["sources", { sources: { documents: [{ text: "a file" }] } }],
      ["maxToolCalls", { maxToolCalls: 10 }],
      ["budget", { budget: { searches: 3 } }],
      ["idempotencyKey", { idempotencyKey: "k" }],
      ["previousJobId", { previousJobId: "job_0" }],
    ];
    for (const [option, extra] of rejected) {
      let thrown: unknown;
      try {
        sonde.research.start({ model, query, ...extra });
      } catch (error) {
        thrown = error;
      }
      expect(UnsupportedOptionError.isInstance(thrown), option).toBe(true);
      expect((thrown as UnsupportedOptionError).option).toBe(option);
    }
    const noBase = new Sonde({ hosted: { apiKey: KEY }, env: {} });
    expect(() => noBase.research.start({ model, query })).toThrow(/set SONDE_HOSTED_BASE_URL/);
    expect(() => noBase.research.validate({ model, query })).toThrow(InvalidRequestError);
    const fromEnv = new Sonde({ env: { SONDE_HOSTED_BASE_URL: BASE, SONDE_HOSTED_API_KEY: KEY } });
    expect(() => fromEnv.research.start({ model, query })).not.toThrow();
    expect(posts()).toBe(0);
  });
});

describe("hosted job API: cancel", () => {
  it("a cancel the service accepted but has not confirmed within hosted.cancelWaitMs answers pending, not cancelled", async () => {
    server.route({
      [`DELETE ${BASE}/v1/jobs/:id`]: empty(202),
      [`GET ${BASE}/v1/jobs/:id`]: (call) =>
        json({ job_id: call.params.id, status: "running", agent_id: "agents.deep_research" }),
    });
    const sonde = new Sonde({
      hosted: { apiKey: KEY, baseURL: BASE, cancelWaitMs: 80 },
      retry: { attempts: 3, minDelayMs: 5, maxDelayMs: 10 },
      env: {},
    });
    const outcome = await sonde.research.cancel(ref());
    expect(outcome).toMatchObject({ outcome: "pending", finalStatus: "running" });
    expect(outcome.detail).toMatch(/accepted the cancel but the job had not reported canceled after 0\.08 s/);
    expect(server.callsTo(`GET ${BASE}/v1/jobs/:id`).length).toBeGreaterThan(1);
  });

  it("DELETE, then poll until canceled: the charge of work already done is reported; a second cancel is already-terminal (409)", async () => {
    const { exchanges } = transcript("hosted", "cancel-charged.json");
    const seen = replay(server, BASE, exchanges);
    const sonde = client();
    const first = await sonde.research.cancel(ref());
    expect(first).toMatchObject({
      outcome: "cancelled",
      finalStatus: "cancelled",
      usage: { costUSD: 1.37, costSource: "provider" },
    });
    const second = await sonde.research.cancel(ref());
    expect(second).toMatchObject({ outcome: "already-terminal", finalStatus: "cancelled" });
    expect(seen.map((s) => s.method)).toEqual(["DELETE", "GET", "DELETE", "GET"]);
  });

  it("a DELETE whose connection fails rejects with a typed SondeError, not a raw fetch error", async () => {
    server.route({ [`DELETE ${BASE}/v1/jobs/job_01HZX3K9Q7`]: networkError() });
    const error = await client()
      .research.cancel(ref())
      .catch((e: unknown) => e);
    expect(SondeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ provider: "hosted" });
  });

  it("the msw handlers enforce one job in flight and charge a cancel only once work ran", async () => {
    server.use(...handlers({ baseURL: BASE, report: "Handler report." }));
    const sonde = client({ attempts: 0, minDelayMs: 1, maxDelayMs: 10 });
    const running = sonde.research.start({ model, query });
    for await (const event of running) if (event.type === "created") break;
    const second = await sonde.research
      .start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(RateLimitError.isInstance(second)).toBe(true);
    const outcome = await sonde.research.cancel(running.toRef());
    expect(outcome).toMatchObject({ outcome: "cancelled" });
    expect(outcome.usage).toBeUndefined(); // canceled while queued: nothing consumed
    const third = sonde.research.start({ model, query });
    expect((await third.result()).report).toBe("Handler report.");
  });
});
