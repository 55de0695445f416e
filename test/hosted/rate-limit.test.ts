/**
 * A 429 before any job id exists: never a silent or unbounded wait. A wait longer than
 * retry.maxDelayMs is surfaced at once; a shorter one is waited out (logged at info) and
 * the invoke resent once; the one-job-in-flight 429 is never resent. Real POST counts and
 * real wall time over msw, with Retry-After in seconds and as an HTTP-date.
 */
import { describe, expect, it } from "vitest";
import { RateLimitError, Sonde } from "../../src/index.js";
import { fixtureJson } from "../helpers/fixtures.js";
import { createTestServer, json } from "../helpers/test-server.js";

const BASE = "https://hosted.test";
const INVOKE = `POST ${BASE}/v1/agents/agents.deep_research/invoke`;
const model = "hosted:agents.deep_research";
const query = "What changed in EU battery regulation in 2025?";
const { exchanges } = fixtureJson<{ exchanges: { response: { body: unknown } }[] }>(
  "hosted/invoke-completed.json",
);

const server = createTestServer();

interface Logged {
  level: string;
  message: string;
  data?: Record<string, unknown> | undefined;
}

function client(maxDelayMs = 10_000) {
  const logged: Logged[] = [];
  const log =
    (level: string) =>
    (message: string, data?: Record<string, unknown>): void => {
      logged.push({ level, message, data });
    };
  const sonde = new Sonde({
    hosted: { apiKey: "hosted-key-0123456789abcdef", baseURL: BASE },
    // Six retries: the rule, not the budget, must bound the resends.
    retry: { attempts: 6, minDelayMs: 1, maxDelayMs },
    logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
    env: {},
  });
  return { sonde, logged };
}

type RetryAfterForm = "seconds" | "HTTP-date";

/** Answers every invoke with a generic 429 (`rateLimited` times, then the job); returns the invokes. */
function invokeRateLimited(seconds: number, form: RetryAfterForm, rateLimited = Number.POSITIVE_INFINITY) {
  server.route({
    [INVOKE]: (call) => {
      if (call.n >= rateLimited) return json(exchanges[0]!.response.body);
      // Whole seconds, as a real server's clock and Date header give them.
      const now = Math.floor(Date.now() / 1000) * 1000;
      const headers: Record<string, string> =
        form === "seconds"
          ? { "Retry-After": String(seconds) }
          : {
              "Retry-After": new Date(now + seconds * 1000).toUTCString(),
              Date: new Date(now).toUTCString(),
            };
      return json({ error: { message: "Too many requests" } }, { status: 429, headers });
    },
    [`GET ${BASE}/v1/jobs/job_01HZX3K9Q7`]: json(exchanges[2]!.response.body),
  });
  return server.callsTo(INVOKE);
}

describe("hosted: a 429 before the job exists", () => {
  for (const form of ["seconds", "HTTP-date"] as const) {
    it(`Retry-After 30 s (${form}) beyond retry.maxDelayMs is surfaced at once, after one POST`, async () => {
      const posts = invokeRateLimited(30, form);
      const { sonde } = client(10_000);
      const started = performance.now();
      const error = await sonde.research
        .start({ model, query })
        .result()
        .catch((e: unknown) => e);
      const elapsed = performance.now() - started;
      expect(RateLimitError.isInstance(error)).toBe(true);
      expect((error as RateLimitError).retryAfterMs).toBe(30_000);
      expect((error as Error).message).toMatch(
        /wait 30 s, longer than retry\.maxDelayMs \(10 s\).*did not wait/,
      );
      expect(posts).toHaveLength(1);
      // Nowhere near the 30 s the server asked for.
      expect(elapsed).toBeLessThan(10_000);
    });

    it(`Retry-After 1 s (${form}) is waited out and the invoke resent once; a second 429 is surfaced`, async () => {
      const posts = invokeRateLimited(1, form);
      const { sonde, logged } = client(10_000);
      const error = await sonde.research
        .start({ model, query })
        .result()
        .catch((e: unknown) => e);
      expect(RateLimitError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/waited and resent once; it was rate limited again/);
      expect(posts).toHaveLength(2);
      // The resend came after the server's wait (timers may fire a millisecond early).
      expect(posts[1]!.at - posts[0]!.at).toBeGreaterThanOrEqual(990);
      const waits = logged.filter((l) => /rate limited before the job was created/.test(l.message));
      expect(waits).toHaveLength(1);
      expect(waits[0]).toMatchObject({ level: "info", data: { provider: "hosted" } });
      expect(waits[0]!.data!.waitMs).toBeGreaterThanOrEqual(1000);
    });
  }

  it("a resend that is accepted starts the job: two POSTs, one job", async () => {
    const posts = invokeRateLimited(1, "seconds", 1);
    const { sonde } = client(10_000);
    const job = sonde.research.start({ model, query });
    const result = await job.result();
    expect(result.status).toBe("completed");
    expect(result.jobId).toBe("job_01HZX3K9Q7");
    expect(posts).toHaveLength(2);
  });

  it("the one-job-in-flight 429 is not resent: the error says to poll or cancel the running job", async () => {
    const { responses } = fixtureJson<{
      responses: Record<string, { status: number; headers?: Record<string, string>; body: unknown }>;
    }>("hosted/errors.json");
    const r = responses["429"]!;
    server.route({ [INVOKE]: json(r.body, { status: r.status, ...(r.headers && { headers: r.headers }) }) });
    // Retry-After 30 s is within this maxDelayMs: only the in-flight rule stops the resend.
    const { sonde } = client(60_000);
    const started = performance.now();
    const error = await sonde.research
      .start({ model, query })
      .result()
      .catch((e: unknown) => e);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: false, retryAfterMs: 30_000 });
    expect((error as Error).message).toMatch(
      /poll the running job.*or cancel it \(research\.cancel\(ref\)\)/,
    );
    expect(server.callsTo(INVOKE)).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
