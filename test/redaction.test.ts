/**
 * No API key ever leaves the process in text Sonde writes: a key planted in every
 * config field is echoed back by a hostile provider on every failure path we have,
 * and must not appear in any error, event, ref, log line or serialized client.
 */
import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { Sonde } from "../src/index.js";
import { redactValue } from "../src/redact.js";
import { adapters } from "../src/registry.js";
import { clearMocks, mockResearch } from "../src/testing/index.js";
import { sseEvent } from "./helpers/sse.js";
import { createTestServer, json, networkError, sse } from "./helpers/test-server.js";

const KEYS = {
  openai: "sk-proj-PLANTEDopenaiKEY0123456789",
  gemini: "AIzaPLANTEDgeminiKEY0123456789abcd",
  openrouter: "sk-or-v1-PLANTEDopenrouterKEY0123456789",
  perplexity: "pplx-PLANTEDperplexityKEY0123456789",
  hosted: "hosted-PLANTED-key-0123456789",
  chat: "chat-PLANTED-portable-key-0123456789",
} as const;
const planted = Object.values(KEYS);

const models: Record<string, string> = {
  openai: "openai:gpt-5.5-pro",
  gemini: "gemini:deep-research-preview-04-2026",
  openrouter: "openrouter:perplexity/sonar-deep-research",
  perplexity: "perplexity:medium",
  hosted: "hosted:agents.deep_research",
};

let mode: "401" | "500" | "network" | "stream-error" = "401";
// Echo every credential the request carried, the way careless servers do.
const echo = (call: { headers: Headers; url: URL }) =>
  [...call.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("; ") + ` url=${call.url.href}`;
createTestServer({
  "ALL https://redaction.test/*": (call) => {
    if (mode === "network") return networkError();
    if (mode === "stream-error")
      return sse(sseEvent({ error: { message: echo(call), code: 502 } }), {
        headers: { "content-type": "text/event-stream" },
      });
    const body = {
      error: { message: `Incorrect API key provided: ${echo(call)}`, code: "invalid_api_key" },
    };
    return json(body, { status: mode === "401" ? 401 : 500, headers: { "x-request-id": echo(call) } });
  },
});
afterEach(() => clearMocks());

const logs: string[] = [];
const logger = {
  debug: (m: string, d?: unknown) => logs.push(m + JSON.stringify(d ?? {})),
  info: (m: string, d?: unknown) => logs.push(m + JSON.stringify(d ?? {})),
  warn: (m: string, d?: unknown) => logs.push(m + JSON.stringify(d ?? {})),
  error: (m: string, d?: unknown) => logs.push(m + JSON.stringify(d ?? {})),
};

function client() {
  return new Sonde({
    openai: {
      apiKey: KEYS.openai,
      baseURL: "https://redaction.test/openai",
      organization: "org-x",
      project: "proj-x",
    },
    gemini: { apiKey: KEYS.gemini, baseURL: "https://redaction.test/gemini" },
    openrouter: { apiKey: KEYS.openrouter, baseURL: "https://redaction.test/openrouter" },
    perplexity: { apiKey: KEYS.perplexity, baseURL: "https://redaction.test/perplexity" },
    hosted: { apiKey: KEYS.hosted, baseURL: "https://redaction.test/hosted" },
    portable: { chat: { local: { baseURL: "https://redaction.test/chat", apiKey: KEYS.chat } } },
    retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 },
    idleTimeoutMs: 2_000,
    logger,
    env: {},
  });
}

function assertClean(label: string, text: string) {
  for (const key of planted) expect(text, `${label} leaked ${key.slice(0, 8)}…`).not.toContain(key);
}

describe("no key in any output", () => {
  const providers = Object.keys(models).filter((p) => adapters[p as keyof typeof adapters]);

  it.each(
    providers.flatMap((p) =>
      (["401", "500", "network", "stream-error"] as const).map((m) => [p, m] as const),
    ),
  )("%s, failure %s: errors, events and logs are clean", async (provider, failure) => {
    mode = failure;
    logs.length = 0;
    const c = client();
    const job = c.research.start({ model: models[provider]!, query: "q" });
    const events: unknown[] = [];
    let thrown: unknown;
    try {
      for await (const event of job) events.push(event);
    } catch (error) {
      thrown = error;
    }
    const settled = await job.result().then(
      (r) => r,
      (e: unknown) => e,
    );
    const error = (thrown ?? settled) as Error;
    assertClean("events", JSON.stringify(events));
    assertClean("error message", String((error as Error)?.message));
    assertClean("error JSON", JSON.stringify(error));
    assertClean("error stack", String((error as Error)?.stack));
    assertClean("error inspect", inspect(error, { depth: 5 }));
    assertClean("logs", logs.join("\n"));
  });

  it("refs and the client itself are clean", async () => {
    mockResearch("report").always().register();
    const c = client();
    for (const provider of providers) {
      const job = c.research.start({ model: models[provider]!, query: "q" });
      await job.result();
      assertClean("ref", JSON.stringify(job.toRef()));
    }
    assertClean("client JSON", JSON.stringify(c));
    assertClean("client inspect", inspect(c, { depth: 10, showHidden: true }));
  });
});

describe("redactValue", () => {
  it("scrubs credential-named fields whatever their value looks like, and leaves the rest", () => {
    // Values that match no known key shape and were never registered: only the field name gives them away.
    const echoed = {
      request: {
        headers: { Authorization: "tok.unregistered.0001", "X-Goog-Api-Key": "gk-unregistered-0002" },
        api_key: "plain-unregistered-0003",
      },
      attempts: [{ "x-api-key": "xk-unregistered-0004", apiKey: "ak-unregistered-0005" }],
      message: "quota exceeded",
      code: 429,
    };
    const scrubbed = redactValue(echoed);
    for (const value of ["0001", "0002", "0003", "0004", "0005"])
      expect(JSON.stringify(scrubbed)).not.toContain(value);
    expect(scrubbed).toEqual({
      request: {
        headers: { Authorization: "[redacted]", "X-Goog-Api-Key": "[redacted]" },
        api_key: "[redacted]",
      },
      attempts: [{ "x-api-key": "[redacted]", apiKey: "[redacted]" }],
      message: "quota exceeded",
      code: 429,
    });
  });
});
