import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, defaultFetcher, fetchTransport } from "../../providers/portable/index.js";
import { handlers } from "../../providers/portable/testing.js";
import { AuthenticationError, Sonde } from "../../src/index.js";
import { collect } from "./helpers.js";

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const OPENROUTER_KEY = "sk-or-v1-test-0123456789abcdef";
const client = () =>
  new Sonde({
    env: {},
    openrouter: { apiKey: OPENROUTER_KEY },
    portable: {
      search: { provider: "tavily", apiKey: "tvly-test-0123456789" },
      store: createMemoryStore(),
      fetcher: defaultFetcher({ lookup: false, transport: fetchTransport(fetch), robots: false }),
    },
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 10 },
  });

describe("portable msw handlers (providerHandlers.portable)", () => {
  it("serve OpenRouter chat, Tavily search and pages, so portable:openrouter/… runs its real HTTP paths", async () => {
    const requests: Request[] = [];
    server.events.on("request:start", ({ request }) => {
      requests.push(request.clone());
    });
    server.use(...handlers({ report: "What follows was written by a simulated model." }));
    const job = client().research.start({
      model: "portable:openrouter/openai/gpt-5-mini",
      query: "How do deep research agents verify their citations?",
    });
    const events = await collect(job);
    const result = await job.result();
    server.events.removeAllListeners();

    expect(result.status).toBe("completed");
    expect(result.report).toContain("What follows was written by a simulated model.");
    expect(result.citations.some((c) => c.verified && c.url.startsWith("https://demo.sonde.invalid/"))).toBe(
      true,
    );
    expect(
      events.some((e) => e.type === "search" && e.action === "open_page" && e.state === "completed"),
    ).toBe(true);
    // OpenRouter gets JSON mode, max_tokens and the bearer key.
    const chat = requests.filter((r) => r.url === "https://openrouter.ai/api/v1/chat/completions");
    expect(chat.length).toBe(4);
    const body = (await chat[0]!.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      model: "openai/gpt-5-mini",
      max_tokens: 4096,
      response_format: { type: "json_object" },
    });
    expect(chat[0]!.headers.get("authorization")).toBe(`Bearer ${OPENROUTER_KEY}`);
    expect(requests.filter((r) => r.url === "https://api.tavily.com/search").length).toBe(
      result.usage.searches,
    );
  });

  it("serve the pages given as citations, and fail every chat call on request", async () => {
    server.use(
      ...handlers({
        citations: [
          {
            url: "https://stats.example.org/cycling/2024",
            title: "Cycling count 2024",
            snippet:
              "In 2024 the automatic counter on the river bridge recorded an average of 1,250 bicycle commuters per weekday.",
          },
        ],
      }),
    );
    const ok = client().research.start({
      model: "portable:openrouter/openai/gpt-5-mini",
      query: "How many bicycle commuters crossed the river bridge counter in 2024?",
    });
    const result = await ok.result();
    expect(result.citations.map((c) => c.url)).toEqual(["https://stats.example.org/cycling/2024"]);

    server.resetHandlers();
    server.use(
      ...handlers({
        fail: { status: 401, body: { error: { message: "No auth credentials found", code: 401 } } },
      }),
    );
    const failing = client().research.start({
      model: "portable:openrouter/openai/gpt-5-mini",
      query: "anything at all?",
    });
    const error = await failing.result().catch((e: unknown) => e);
    expect(AuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).not.toContain(OPENROUTER_KEY);
  });
});
