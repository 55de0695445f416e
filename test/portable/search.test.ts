import { readFileSync } from "node:fs";
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, defaultFetcher, fetchTransport } from "../../providers/portable/index.js";
import { AuthenticationError, type PortableSettings, Sonde } from "../../src/index.js";
import { API_KEY, CHAT_URL, collect, fixtureJson, MODEL, scriptedChat } from "./helpers.js";

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const QUERY = "How many bicycle commuters crossed the river bridge in 2024?";
const SEARCH_KEY = "tvly-test-0123456789abcdef";
const statsHtml = readFileSync(new URL("../fixtures/portable/page.html", import.meta.url), "utf8");

/** The two pages every fixture's results point at, served as real HTML. */
const pages = [
  http.get("https://stats.example.org/cycling/2024", () =>
    HttpResponse.html(statsHtml, { headers: { "content-type": "text/html; charset=utf-8" } }),
  ),
  http.get("https://news.example.com/2025/01/bridge-cycling", () =>
    HttpResponse.html(
      "<html><head><title>More people cycle across the river bridge</title></head><body><article><p>City officials said the protected bike lane that opened in May 2023 was the main reason for the growth in bicycle commuters on the river bridge.</p></article></body></html>",
    ),
  ),
];

/** Takes any value: the run-time checks of a wrong search config are under test. */
function client(search: Record<string, unknown>) {
  return new Sonde({
    env: {},
    portable: {
      chat: { local: { baseURL: CHAT_URL, apiKey: API_KEY } },
      search: search as PortableSettings["search"],
      store: createMemoryStore(),
      // The pages are msw's: requests go through the patched fetch, host names unresolved.
      fetcher: defaultFetcher({ lookup: false, transport: fetchTransport(fetch), robots: false }),
    },
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 10 },
  });
}

describe("built-in search backends", () => {
  const cases = [
    {
      name: "tavily",
      config: { provider: "tavily", apiKey: SEARCH_KEY },
      handler: (seen: Request[]) =>
        http.post("https://api.tavily.com/search", async ({ request }) => {
          seen.push(request.clone());
          return HttpResponse.json(fixtureJson("tavily-search.json") as never);
        }),
      check: async (request: Request, query: string) => {
        expect(request.headers.get("authorization")).toBe(`Bearer ${SEARCH_KEY}`);
        expect(await request.json()).toEqual({ query, max_results: 5, search_depth: "basic" });
      },
    },
    {
      name: "brave",
      config: { provider: "brave", apiKey: SEARCH_KEY },
      handler: (seen: Request[]) =>
        http.get("https://api.search.brave.com/res/v1/web/search", ({ request }) => {
          seen.push(request.clone());
          return HttpResponse.json(fixtureJson("brave-search.json") as never);
        }),
      check: async (request: Request, query: string) => {
        expect(request.headers.get("x-subscription-token")).toBe(SEARCH_KEY);
        const url = new URL(request.url);
        expect(Object.fromEntries(url.searchParams)).toEqual({ q: query, count: "5" });
      },
    },
    {
      name: "searxng",
      config: { provider: "searxng", baseURL: "http://searx.test" },
      handler: (seen: Request[]) =>
        http.get("http://searx.test/search", ({ request }) => {
          seen.push(request.clone());
          return HttpResponse.json(fixtureJson("searxng-search.json") as never);
        }),
      check: async (request: Request, query: string) => {
        expect(Object.fromEntries(new URL(request.url).searchParams)).toEqual({ q: query, format: "json" });
        expect(request.headers.get("authorization")).toBeNull();
      },
    },
  ];

  for (const c of cases) {
    it(`${c.name}: sends the documented request, and the loop reads the pages it finds with the default fetcher`, async () => {
      const seen: Request[] = [];
      const chat = scriptedChat({ plan: () => ({ queries: ["bicycle commuters river bridge 2024"] }) });
      server.use(chat.handler, c.handler(seen), ...pages);
      const job = client(c.config).research.start({ model: MODEL, query: QUERY });
      const events = await collect(job);
      const result = await job.result();

      expect(seen).toHaveLength(1);
      await c.check(seen[0]!, "bicycle commuters river bridge 2024");
      const opened = events.flatMap((e) =>
        e.type === "search" && e.action === "open_page" && e.state === "completed" ? [e.url] : [],
      );
      expect(opened).toEqual([
        "https://stats.example.org/cycling/2024",
        "https://news.example.com/2025/01/bridge-cycling",
      ]);
      // The HTML became text the quotes were checked against.
      const extract = chat.calls.find((call) => call.task === "extract")!;
      expect([...extract.sources.values()][0]).toContain(
        "In 2024 the automatic counter on the river bridge recorded an average of 1,250 bicycle commuters per weekday.",
      );
      expect(result.status).toBe("completed");
      expect(
        result.citations.find((cite) => cite.url === "https://stats.example.org/cycling/2024"),
      ).toMatchObject({
        // The article title, without the site name the <title> carries.
        title: "Cycling count 2024 & trends",
        verified: true,
      });
    });
  }

  it("fails the job with AuthenticationError when the search key is refused, and never echoes the key", async () => {
    const chat = scriptedChat();
    server.use(
      chat.handler,
      http.post("https://api.tavily.com/search", () =>
        HttpResponse.json(fixtureJson("tavily-error-401.json") as never, { status: 401 }),
      ),
    );
    const job = client({ provider: "tavily", apiKey: SEARCH_KEY }).research.start({
      model: MODEL,
      query: QUERY,
    });
    const events = await collect(job);
    const error = await job.result().catch((e: unknown) => e);
    expect(AuthenticationError.isInstance(error)).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });
    expect(JSON.stringify([events, error, (error as Error).message, job.toRef()])).not.toContain(SEARCH_KEY);
  });

  it("rejects a search config it cannot use before any request", () => {
    expect(() => client({ provider: "brave" }).research.start({ model: MODEL, query: QUERY })).toThrow(
      "portable.search: brave needs an apiKey.",
    );
    expect(() => client({ provider: "searxng" }).research.start({ model: MODEL, query: QUERY })).toThrow(
      "portable.search: searxng needs the baseURL of your instance.",
    );
    expect(() => client({ provider: "bing" }).research.start({ model: MODEL, query: QUERY })).toThrow(
      /portable.search must be an object with search/,
    );
  });
});
