/**
 * A job-creating POST is sent once unless the answer proves nothing was created.
 * A gateway's 502 or timeout (504, Cloudflare's 524) proves nothing: the engine behind the
 * gateway may have accepted the job and be billing for it.
 */
import { describe, expect, it } from "vitest";
import {
  IndeterminateSubmissionError,
  InvalidRequestError,
  ProviderUnavailableError,
  RateLimitError,
  Sonde,
} from "../../src/index.js";
import { createTestServer, json } from "../helpers/test-server.js";

const BASE = "https://submit.test/v1";
const RESPONSES = `POST ${BASE}/responses`;
let status = 504;
let retryAfter = "30";
const server = createTestServer({
  [RESPONSES]: () =>
    status === 429
      ? json(
          {
            error: {
              message: "Rate limit reached for requests",
              type: "requests",
              code: "rate_limit_exceeded",
            },
          },
          { status, headers: { "retry-after": retryAfter } },
        )
      : json({ error: { message: "upstream request timeout" } }, { status }),
});
const posts = () => server.callsTo(RESPONSES).length;

const client = () =>
  new Sonde({
    openai: { apiKey: "sk-test-submit-0000", baseURL: BASE },
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 10 },
    env: {},
  });

/** What result() rejects with for one job whose POST the test server answers. */
const submitted = () =>
  client()
    .research.start({ model: "openai:gpt-5.5-pro", query: "q" })
    .result()
    .catch((e: unknown) => e);

describe("job submission", () => {
  it.each([502, 504, 524])(
    "a %i from a gateway on the POST is indeterminate and never resent",
    async (code) => {
      status = code;
      const job = client().research.start({ model: "openai:gpt-5.5-pro", query: "q" });
      const error = await job.result().catch((e: unknown) => e);
      expect(posts()).toBe(1);
      expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ retryable: false, status: code });
    },
  );

  it("a 503 proves nothing was created: the POST is retried under the policy", async () => {
    status = 503;
    const error = await submitted();
    expect(posts()).toBe(4);
    expect(ProviderUnavailableError.isInstance(error)).toBe(true);
  });

  it("a 429 on the POST asking for longer than retry.maxDelayMs is surfaced at once (any engine)", async () => {
    status = 429;
    const error = await submitted();
    expect(posts()).toBe(1);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryAfterMs: 30_000, provider: "openai" });
  });

  // The README's error example switches on `code` and logs `providerCode`: the rewrapped
  // RateLimitError (why Sonde did or did not wait) must keep the provider's own code.
  it.each([
    ["asking for longer than retry.maxDelayMs", "30", 1],
    ["rate limited again after the one resend", "0", 2],
  ])("a 429 on the POST %s keeps the provider's code", async (_, after, sent) => {
    status = 429;
    retryAfter = after;
    const error = await submitted();
    retryAfter = "30";
    expect(posts()).toBe(sent);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "rate_limit", providerCode: "rate_limit_exceeded" });
  });

  // A base URL missing its path (or a model the account cannot see) answers the POST with a
  // 404: no job was ever named, so "job not found" would send the user looking for one.
  it("a 404 on the POST is an InvalidRequestError saying nothing was created and to check baseURL", async () => {
    status = 404;
    const error = await submitted();
    expect(posts()).toBe(1);
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "invalid_request", status: 404, provider: "openai" });
    expect((error as Error).message).toMatch(/upstream request timeout.*No job was created.*baseURL/);
  });
});
