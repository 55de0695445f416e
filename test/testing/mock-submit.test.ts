/**
 * `failSubmit`: a mocked submission refused before the job exists, as an engine's would be
 * (bad key, rate limit, an answer that never came): no `created`, no ref, the typed error.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  AuthenticationError,
  IndeterminateSubmissionError,
  InvalidRequestError,
  RateLimitError,
  Sonde,
} from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => clearMocks());
const client = () =>
  new Sonde({
    openai: { apiKey: "sk-test-not-used" },
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    env: {},
  });
const model = "openai:gpt-5.5-pro";

describe("mockResearch failSubmit", () => {
  it("an authentication failure: created() and result() reject with it, no event, no ref", async () => {
    const error = new AuthenticationError("openai: the API key was rejected; check OPENAI_API_KEY.");
    const mock = mockResearch("never", { failSubmit: error }).always().register();
    const job = client().research.start({ model, query: "q" });
    await expect(job.created()).rejects.toBe(error);
    await expect(job.result()).rejects.toMatchObject({ code: "authentication" });
    expect(() => job.toRef()).toThrow();
    const events: string[] = [];
    for await (const event of client().research.start({ model, query: "again" }))
      events.push(event.type === "error" ? `error:${event.error.code}` : event.type);
    // As from an engine that refused the submit: the error and done, never a `created`.
    expect(events).toEqual(["error:authentication", "done"]);
    expect(mock.calls.map((call) => call.query)).toEqual(["q", "again"]);
  });

  it("an indeterminate submission is not resent (one more submission would have succeeded)", async () => {
    const error = new IndeterminateSubmissionError(
      "openai: the submission got no answer; check the dashboard.",
    );
    mockResearch("never", { failSubmit: { error, times: 1 } })
      .always()
      .register();
    const job = client().research.start({ model, query: "q" });
    await expect(job.result()).rejects.toBeInstanceOf(IndeterminateSubmissionError);
  });

  it("a rate limit on the first submission is resent after its Retry-After, as in production", async () => {
    const error = new RateLimitError("openai: rate limited", { retryAfterMs: 5, retryable: true });
    mockResearch("The report.", { failSubmit: { error, times: 1 } })
      .always()
      .register();
    const job = client().research.start({ model, query: "q" });
    const result = await job.result();
    expect(result).toMatchObject({ status: "completed", report: "The report." });
    expect(job.toRef().jobId).toMatch(/^mock_/);
  });

  it("a rate limit on every submission ends in RateLimitError with its retryAfterMs", async () => {
    const error = new RateLimitError("openai: rate limited", { retryAfterMs: 5, retryable: true });
    mockResearch("never", { failSubmit: error }).always().register();
    await expect(client().research.start({ model, query: "q" }).result()).rejects.toMatchObject({
      code: "rate_limit",
      retryAfterMs: 5,
    });
  });

  it("anything but a typed error is refused when the mock is made", () => {
    expect(() => mockResearch("r", { failSubmit: { code: "x", message: "y" } as never })).toThrow(
      InvalidRequestError,
    );
    expect(() => mockResearch("r", { failSubmit: { error: new RateLimitError("r"), times: -1 } })).toThrow(
      /failSubmit/,
    );
  });
});
