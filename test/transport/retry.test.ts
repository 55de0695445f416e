import { describe, expect, it } from "vitest";
import { AuthenticationError, ProviderUnavailableError, RateLimitError } from "../../src/errors.js";
import { errorFromFailure, failureFromResponse } from "../../src/transport/error-body.js";
import { pollUntilTerminal } from "../../src/transport/poll.js";
import { parseRetryAfter, pollDelay, withRetry } from "../../src/transport/retry.js";

describe("parseRetryAfter", () => {
  const now = new Date("2026-11-29T12:00:00Z");
  it("reads delta-seconds, HTTP-dates and retry-after-ms", () => {
    expect(parseRetryAfter(new Headers({ "retry-after": "7" }), now)).toBe(7000);
    expect(parseRetryAfter(new Headers({ "retry-after": "Sun, 29 Nov 2026 12:00:30 GMT" }), now)).toBe(
      30_000,
    );
    expect(parseRetryAfter(new Headers({ "retry-after-ms": "1500" }), now)).toBe(1500);
    expect(parseRetryAfter(new Headers({ "retry-after": "Sun, 29 Nov 2026 11:00:00 GMT" }), now)).toBe(0);
    expect(parseRetryAfter(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined();
  });

  it("reads an HTTP-date against the response's own Date header, whatever the local clock says", () => {
    const headers = new Headers({
      "retry-after": "Sun, 29 Nov 2026 09:00:30 GMT",
      date: "Sun, 29 Nov 2026 09:00:00 GMT",
    });
    expect(parseRetryAfter(headers, now)).toBe(30_000);
  });
});

describe("errorFromFailure", () => {
  it("maps statuses to typed errors with status, request id and Retry-After", async () => {
    const response = new Response(null, {
      status: 429,
      headers: { "retry-after": "3", "x-request-id": "req_123" },
    });
    const failure = await failureFromResponse(
      "openai",
      response,
      { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
      () => new Date(),
    );
    const error = errorFromFailure(failure);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 429, requestId: "req_123", retryAfterMs: 3000, retryable: true });
    expect(error.message).toContain("Rate limit reached");

    const auth = errorFromFailure(
      await failureFromResponse("gemini", new Response(null, { status: 403 }), undefined),
    );
    expect(AuthenticationError.isInstance(auth)).toBe(true);
    expect(auth.message).toMatch(/Check the gemini API key/);
    const down = errorFromFailure(
      await failureFromResponse("hosted", new Response(null, { status: 503 }), "busy"),
    );
    expect(ProviderUnavailableError.isInstance(down) && down.retryable).toBe(true);
  });

  it("reads FastAPI-style validation details", async () => {
    const failure = await failureFromResponse("perplexity", new Response(null, { status: 422 }), {
      detail: [{ loc: ["body", "request", "model"], msg: "field required", type: "missing" }],
    });
    expect(errorFromFailure(failure).message).toContain("body.request.model: field required");
  });
});

describe("withRetry", () => {
  it("waits at least Retry-After before the next attempt", async () => {
    const times: number[] = [];
    const result = await withRetry(
      async () => {
        times.push(performance.now());
        if (times.length < 2) throw new RateLimitError("slow down", { retryAfterMs: 120 });
        return "ok";
      },
      { policy: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 }, signal: new AbortController().signal },
    );
    expect(result).toBe("ok");
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(115);
  });

  it("does not retry non-retryable errors and stops after the budget", async () => {
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw new AuthenticationError("bad key");
        },
        { policy: { attempts: 5, minDelayMs: 1, maxDelayMs: 2 }, signal: new AbortController().signal },
      ),
    ).rejects.toBeInstanceOf(AuthenticationError);
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw new ProviderUnavailableError("503");
        },
        { policy: { attempts: 2, minDelayMs: 1, maxDelayMs: 2 }, signal: new AbortController().signal },
      ),
    ).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(calls).toBe(3);
  });
});

describe("polling", () => {
  const policy = { attempts: 2, minDelayMs: 1, maxDelayMs: 5 };

  it("waits the server's Retry-After between polls, not the shorter backoff", async () => {
    const times: number[] = [];
    const seen: number[] = [];
    for await (const value of pollUntilTerminal({
      provider: "hosted",
      fetch: async () => {
        times.push(performance.now());
        return { value: times.length, retryAfterMs: 120 };
      },
      isTerminal: (value) => value >= 2,
      policy,
      signal: new AbortController().signal,
      immediate: true,
    }))
      seen.push(value);
    expect(seen).toEqual([1, 2]);
    expect(times[1]! - times[0]!, "the second poll came before Retry-After").toBeGreaterThanOrEqual(115);
  });

  it("pollDelay: a Retry-After wins even above maxDelayMs; without one, jittered backoff within the ceiling", () => {
    expect(pollDelay(0, policy, 120)).toBe(120);
    expect(pollDelay(3, { attempts: 2, minDelayMs: 100, maxDelayMs: 1_000 }, 0)).toBe(0);
    for (let attempt = 0; attempt < 8; attempt++) {
      const ceiling = Math.min(1_000, 100 * 2 ** attempt);
      const delay = pollDelay(attempt, { attempts: 2, minDelayMs: 100, maxDelayMs: 1_000 });
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
