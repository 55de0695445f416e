/**
 * The Chat Completions error body is read by one schema for both of its users: OpenRouter's
 * engine and the portable engine's chat client classify the same body the same way
 * (bodies as providers/openrouter/WIRE.md §6 documents them). Before, only OpenRouter read
 * the body: a moderation refusal reached the portable engine as "check the API key", and an
 * outage the server called permanent was retried.
 */
import { describe, expect, it } from "vitest";
import { openAICompatibleChat } from "../../providers/portable/chat.js";
import {
  AuthenticationError,
  InvalidRequestError,
  ProviderUnavailableError,
  RateLimitError,
  Sonde,
  type SondeError,
  sondeErrorCodes,
} from "../../src/index.js";
import { streamErrorOf } from "../../src/protocols/chat-completions/errors.js";

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

interface Case {
  name: string;
  status: number;
  body: unknown;
  type: abstract new (...args: never[]) => SondeError;
  /** The provider's own code, kept as `providerCode` (`code` is always a SondeErrorCode). */
  providerCode?: string;
  retryable: boolean;
  message?: RegExp;
}

const cases: Case[] = [
  {
    name: "a 403 with moderation metadata is a flagged input, not a bad key",
    status: 403,
    body: {
      error: {
        code: 403,
        message: "Input was flagged",
        metadata: { reasons: ["violence"], flagged_input: "…", provider_name: "OpenAI", model_slug: "m" },
      },
    },
    type: InvalidRequestError,
    providerCode: "moderation",
    retryable: false,
    message: /flagged by moderation; rephrase/,
  },
  {
    name: "a 503 whose availability says it will not pass is not retryable",
    status: 503,
    body: {
      error: { code: 503, message: "No endpoints available" },
      availability: { code: "region_restricted", retryable: false },
    },
    type: ProviderUnavailableError,
    retryable: false,
    message: /region_restricted; not retryable/,
  },
  {
    name: "a 400 keeps OpenRouter's error_type as its providerCode",
    status: 400,
    body: {
      error: { code: 400, message: "Too long", metadata: { error_type: "context_length_exceeded" } },
    },
    type: InvalidRequestError,
    providerCode: "context_length_exceeded",
    retryable: false,
  },
  {
    name: "a 400 keeps an OpenAI-style string code, never a bare status number",
    status: 400,
    body: { error: { code: "invalid_value", message: "Bad max_tokens", type: "invalid_request_error" } },
    type: InvalidRequestError,
    providerCode: "invalid_value",
    retryable: false,
  },
  {
    name: "a 404 names the model as not served",
    status: 404,
    body: {
      error: { code: 404, message: "No endpoints found for x/y" },
      availability: { code: "no_endpoints" },
    },
    type: InvalidRequestError,
    providerCode: "no_endpoints",
    retryable: false,
    message: /does not serve this model/,
  },
  {
    name: "a 401 is left to the status mapping",
    status: 401,
    body: { error: { code: 401, message: "No auth credentials found" } },
    type: AuthenticationError,
    retryable: false,
  },
  {
    name: "a 429 is left to the status mapping",
    status: 429,
    body: { error: { code: 429, message: "Rate limited", metadata: { error_type: "rate_limit_exceeded" } } },
    type: RateLimitError,
    retryable: true,
  },
];

/** The portable chat client against one scripted answer; counts the calls. */
async function viaPortable(status: number, body: unknown): Promise<{ error: unknown; calls: number }> {
  let calls = 0;
  const chat = openAICompatibleChat({
    name: "router",
    baseURL: "http://127.0.0.1:9/api/v1",
    fetch: async () => {
      calls++;
      return json(status, body);
    },
    clock: () => new Date(),
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 2 },
    flavor: "openrouter",
  });
  const error = await chat
    .complete({
      model: "x/y",
      messages: [{ role: "user", content: "q" }],
      maxTokens: 16,
      signal: AbortSignal.timeout(5_000),
    })
    .catch((e: unknown) => e);
  return { error, calls };
}

async function viaOpenRouter(status: number, body: unknown): Promise<unknown> {
  const client = new Sonde({
    openrouter: { apiKey: "sk-or-test", baseURL: "http://127.0.0.1:9/api/v1" },
    fetch: async () => json(status, body),
    retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 1 },
    env: {},
  });
  return client.research
    .start({ model: "openrouter:openai/o4-mini-deep-research", query: "q" })
    .result()
    .catch((e: unknown) => e);
}

describe("chat completions error bodies: one classification for OpenRouter and the portable chat client", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const portable = await viaPortable(c.status, c.body);
      const openrouter = await viaOpenRouter(c.status, c.body);
      for (const [who, error] of [
        ["portable", portable.error],
        ["openrouter", openrouter],
      ] as const) {
        expect(error, who).toBeInstanceOf(c.type);
        const e = error as SondeError;
        expect({ retryable: e.retryable, status: e.status }, who).toEqual({
          retryable: c.retryable,
          status: c.status,
        });
        expect(sondeErrorCodes, who).toContain(e.code);
        if (c.providerCode) expect(e.providerCode, who).toBe(c.providerCode);
        if (c.message) expect(e.message, who).toMatch(c.message);
      }
      // The portable client retries only what may pass: a 429 (and 5xx that do not say otherwise).
      if (c.retryable) expect(portable.calls).toBeGreaterThan(1);
      else expect(portable.calls).toBe(1);
    });
  }

  it("a mid-stream error chunk: its error_type as the code, retryable only for transient types, the status kept", () => {
    const transient = streamErrorOf(
      { code: 502, message: "Provider returned error", metadata: { error_type: "provider_unavailable" } },
      "openrouter",
    );
    expect(transient).toMatchObject({ code: "provider_unavailable", retryable: true, status: 502 });
    expect(transient.message).toMatch(/^openrouter: Provider returned error \(mid-stream\)\. .*billed again/);
    // Documented as a number; one doc example shows a string.
    expect(streamErrorOf({ code: "server_error", message: "boom" }, "openrouter")).toEqual(
      expect.objectContaining({ code: "server_error", retryable: false }),
    );
    expect(streamErrorOf({}, "openrouter")).toMatchObject({ code: "provider_error", retryable: false });
  });
});
