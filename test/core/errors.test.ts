import { describe, expect, it, vi } from "vitest";
import * as errors from "../../src/errors.js";
import { redact, registerSecret } from "../../src/redact.js";

describe("errors", () => {
  it("isInstance works across two copies of the package", async () => {
    vi.resetModules();
    // A query string makes the loader evaluate a second, independent copy of the module.
    const path = "../../src/errors.js?copy";
    const copy = (await import(/* @vite-ignore */ path)) as typeof errors;
    expect(copy.RateLimitError).not.toBe(errors.RateLimitError);
    const fromCopy = new copy.RateLimitError("slow down", { retryAfterMs: 1000 });
    expect(fromCopy instanceof errors.RateLimitError).toBe(false);
    expect(errors.RateLimitError.isInstance(fromCopy)).toBe(true);
    expect(errors.SondeError.isInstance(fromCopy)).toBe(true);
    expect(errors.AuthenticationError.isInstance(fromCopy)).toBe(false);
    // Subclasses are instances of their parents.
    const retired = new copy.ModelRetiredError(
      "openai:o3-deep-research",
      "2026-07-23T00:00:00Z",
      "openai:gpt-5.5-pro",
    );
    expect(errors.InvalidRequestError.isInstance(retired)).toBe(true);
    expect(retired.name).toBe("ModelRetiredError");
  });

  it("messages and JSON never carry a registered key or a key-shaped string", () => {
    registerSecret("custom-secret-value-123");
    const error = new errors.AuthenticationError(
      "bad key custom-secret-value-123; also sk-proj-abcdefghijklmnop and Bearer abc.def.ghijklmnop",
      { provider: "openai" },
    );
    const text = `${error.message} ${JSON.stringify(error)} ${String(error.stack)}`;
    expect(text).not.toContain("custom-secret-value-123");
    expect(text).not.toContain("sk-proj-abcdefghijklmnop");
    expect(text).not.toContain("abc.def.ghijklmnop");
    expect(redact("key=AIzaSyA1234567890abcdefghijklmnop")).toBe("key=[redacted]");
  });
});

describe("errorFromReport", () => {
  it("gives in-stream failures the same typed class as the matching HTTP status", () => {
    const quota = errors.errorFromReport("openai", {
      code: "insufficient_quota",
      message: "You exceeded your quota",
    });
    expect(errors.InsufficientCreditError.isInstance(quota)).toBe(true);
    const rate = errors.errorFromReport("gemini", { code: "RESOURCE_EXHAUSTED", message: "slow down" });
    expect(errors.RateLimitError.isInstance(rate)).toBe(true);
    const auth = errors.errorFromReport("openrouter", { code: "401", message: "No auth", status: 401 });
    expect(errors.AuthenticationError.isInstance(auth)).toBe(true);
    const other = errors.errorFromReport("openai", {
      code: "vector_store_timeout",
      message: "vector store timed out",
    });
    expect(other).toMatchObject({
      name: "ProviderJobError",
      code: "job_failed",
      providerCode: "vector_store_timeout",
      provider: "openai",
    });
  });
});
