/**
 * `SondeError.code` is a closed set: whatever a provider answers (its own codes, odd or
 * malformed bodies), the error a user catches has a code from `sondeErrorCodes`, and the
 * provider's own code is kept as `providerCode`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openAICompatibleChat } from "../../providers/portable/chat.js";
import {
  AuthenticationError,
  errorFromReport,
  InvalidRequestError,
  RateLimitError,
  Sonde,
  SondeError,
  sondeErrorCodes,
} from "../../src/index.js";
import { redact } from "../../src/redact.js";

const known = new Set<string>(sondeErrorCodes);
const KEY = "sk-test-error-codes-0000";

/** Bodies seen in the wild or plausible after a provider changes: none may break classification. */
const oddBodies: [string, unknown][] = [
  [
    "a new code in the usual envelope",
    { error: { code: "brand_new_code", type: "brand_new_code", message: "new" } },
  ],
  ["Google's envelope with a new status", { error: { code: 400, status: "BRAND_NEW_CODE", message: "new" } }],
  ["fields of the wrong type", { error: { code: { nested: true }, message: 42, type: [], status: 7 } }],
  ["a bare string error", { error: "something broke" }],
  ["a FastAPI detail list", { detail: [{ loc: ["body", "query"], msg: "field required" }, "odd"] }],
  ["an array", [1, 2, 3]],
  ["null", null],
  ["an HTML page", "<html><body>502 Bad Gateway</body></html>"],
];

const statuses = [400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 503];

const engines = {
  openai: {
    model: "openai:gpt-5.5-pro",
    options: { openai: { apiKey: KEY, baseURL: "https://openai.test/v1" } },
  },
  gemini: {
    model: "gemini:deep-research-preview-04-2026",
    options: { gemini: { apiKey: KEY, baseURL: "https://gemini.test/v1beta" } },
  },
  perplexity: {
    model: "perplexity:medium",
    options: { perplexity: { apiKey: KEY, baseURL: "https://pplx.test" } },
  },
  openrouter: {
    model: "openrouter:openai/o3-deep-research",
    options: { openrouter: { apiKey: KEY, baseURL: "https://openrouter.test/api/v1" } },
  },
  hosted: {
    model: "hosted:agents.deep_research",
    options: { hosted: { apiKey: KEY, baseURL: "https://hosted.test" } },
  },
} as const;

function answering(status: number, body: unknown): typeof globalThis.fetch {
  return async () =>
    typeof body === "string"
      ? new Response(body, { status, headers: { "content-type": "text/html" } })
      : Response.json(body, { status });
}

async function startFailing(engine: keyof typeof engines, status: number, body: unknown): Promise<unknown> {
  const { model, options } = engines[engine];
  const client = new Sonde({
    ...options,
    fetch: answering(status, body),
    retry: { attempts: 0, minDelayMs: 1, maxDelayMs: 1 },
    env: {},
  });
  return client.research
    .start({ model, query: "q" })
    .result()
    .catch((error: unknown) => error);
}

function expectClosed(error: unknown): asserts error is SondeError {
  expect(SondeError.isInstance(error)).toBe(true);
  expect(known.has((error as SondeError).code), `code ${(error as SondeError).code}`).toBe(true);
}

describe("closed error codes", () => {
  it.each(Object.keys(engines) as (keyof typeof engines)[])(
    "%s: every status and odd body gives a typed error whose code is in the closed set",
    async (engine) => {
      for (const status of statuses) {
        for (const [name, body] of oddBodies) {
          const error = await startFailing(engine, status, body);
          expectClosed(error);
          expect(error.code, `${engine} ${status} ${name}`).not.toMatch(/brand_new|BRAND_NEW/i);
          if (status === 429)
            expect(RateLimitError.isInstance(error) || error.code === "insufficient_credit").toBe(true);
          if (status === 401) expect(AuthenticationError.isInstance(error)).toBe(true);
          if (status === 400) expect(InvalidRequestError.isInstance(error)).toBe(true);
        }
      }
    },
  );

  it.each(Object.keys(engines) as (keyof typeof engines)[])(
    "%s: a provider's own code on a 400 is kept as providerCode, never as code",
    async (engine) => {
      const error = await startFailing(engine, 400, oddBodies[engine === "gemini" ? 1 : 0]![1]);
      expectClosed(error);
      expect(error.code).toBe("invalid_request");
      expect(error.providerCode).toBe("brand_new_code");
      expect(JSON.parse(JSON.stringify(error))).toMatchObject({
        code: "invalid_request",
        providerCode: "brand_new_code",
      });
    },
  );

  it("portable chat endpoints: odd error bodies give typed errors with a closed code", async () => {
    for (const status of statuses) {
      for (const [, body] of oddBodies) {
        const chat = openAICompatibleChat({
          name: "local",
          baseURL: "https://chat.test/v1",
          fetch: answering(status, body),
          clock: () => new Date(),
          retry: { attempts: 0, minDelayMs: 1, maxDelayMs: 1 },
          flavor: "generic",
        });
        const error = await chat
          .complete({
            model: "m",
            messages: [{ role: "user", content: "q" }],
            maxTokens: 10,
            signal: new AbortController().signal,
          })
          .catch((e: unknown) => e);
        expectClosed(error);
        expect(error.code).not.toMatch(/brand_new|BRAND_NEW/i);
      }
    }
  });

  it("an in-stream report with any code classifies into the closed set and keeps the provider's code", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("openai", "gemini", "openrouter", "perplexity", "hosted", "portable" as const),
        fc.oneof(
          fc.string(),
          fc.constantFrom("insufficient_quota", "RESOURCE_EXHAUSTED", "unauthenticated", "server_error"),
        ),
        fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
        (provider, code, status) => {
          const error = errorFromReport(provider, {
            code,
            message: "m",
            ...(status !== undefined && { status }),
          });
          expectClosed(error);
          expect(error.providerCode).toBe(code ? redact(code) : undefined);
        },
      ),
    );
  });
});
