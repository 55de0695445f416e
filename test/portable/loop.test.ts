import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createMemoryStore } from "../../providers/portable/index.js";
import { mapWire } from "../../providers/portable/map.js";
import { AuthenticationError, type ResearchEvent, Sonde } from "../../src/index.js";
import {
  API_KEY,
  type ChatCall,
  collect,
  fixtureJson,
  MODEL,
  type Page,
  page,
  portableClient,
  scriptedChat,
  scriptedFetcher,
  scriptedSearch,
  spans,
  toResult,
  web,
} from "./helpers.js";

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const QUERY = "How many bicycle commuters crossed the river bridge in 2024 compared with 2023?";
const stats = page("stats.example.org");
const news = page("news.example.com");
const EXACT_2024 =
  "In 2024 the automatic counter on the river bridge recorded an average of 1,250 bicycle commuters per weekday.";
const EXACT_2023 = "In 2023 the same counter recorded an average of 1,000 bicycle commuters per weekday.";

/** The source id the loop gave the source whose text contains `phrase`. */
function sourceId(call: ChatCall, phrase: string): string {
  for (const [id, text] of call.sources) if (text.includes(phrase)) return id;
  throw new Error(`no source contains "${phrase}"`);
}

const types = (events: ResearchEvent[]) => events.map((e) => e.type);
const gapsOf = (events: ResearchEvent[]) => events.flatMap((e) => (e.type === "gap" ? [e.gap] : []));
const citationsOf = (events: ResearchEvent[]) =>
  events.flatMap((e) => (e.type === "citation" ? [e.citation] : []));

function setup(script: Parameters<typeof scriptedChat>[0] = {}, pages: Page[] = web) {
  const chat = scriptedChat(script);
  server.use(chat.handler);
  const search = scriptedSearch(() => pages.map(toResult));
  const fetch = scriptedFetcher(pages);
  const client = portableClient({
    search: search.backend,
    fetcher: fetch.fetcher,
    store: createMemoryStore(),
  });
  return { chat, search, fetch, client };
}

describe("portable loop over an OpenAI-compatible chat endpoint", () => {
  it("plans, searches, reads, checks and writes a cited report; usage counts every call", async () => {
    const { chat, search, fetch, client } = setup();
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);
    const result = await job.result();

    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(events.filter((e) => e.type === "phase").map((e) => (e as { phase: string }).phase)).toEqual([
      "planning",
      "searching",
      "reading",
      "reasoning",
      "writing",
      "verifying",
    ]);
    expect(events.filter((e) => e.type === "status").map((e) => (e as { status: string }).status)).toEqual([
      "queued",
      "running",
      "completed",
    ]);
    // Every query and page shows up as started, then completed.
    for (const query of search.queries) {
      expect(events).toContainEqual(
        expect.objectContaining({ type: "search", action: "search", query, state: "started" }),
      );
      expect(events).toContainEqual(
        expect.objectContaining({ type: "search", action: "search", query, state: "completed" }),
      );
    }
    for (const url of fetch.urls) {
      expect(events).toContainEqual(
        expect.objectContaining({ type: "search", action: "open_page", url, state: "completed" }),
      );
    }

    // The report is the text deltas, cites verified quotations, and its offsets slice claims.
    expect(result.status).toBe("completed");
    expect(result.report).toBe(events.map((e) => (e.type === "text" ? e.delta : "")).join(""));
    expect(result.report).toMatch(/\[1\]/);
    const citations = citationsOf(events);
    expect(citations.length).toBeGreaterThan(0);
    for (const c of citations) {
      expect(c.verified).toBe(true);
      const source = web.find((p) => p.url === c.url)!;
      expect(source.text.replace(/\s+/g, " ")).toContain(c.quote);
    }
    for (const span of spans(result.report, events)) {
      expect(span.length).toBeGreaterThan(10);
      expect(span).not.toMatch(/\[\d+\]/);
    }
    // Each claim is followed by the marker [n] of its source, n indexing result.citations.
    for (const c of citations) {
      const group = result.report.slice(c.endIndex).match(/^\s*((?:\[\d+\])+)/)?.[1] ?? "";
      const urls = (group.match(/\d+/g) ?? []).map((n) => result.citations[Number(n) - 1]?.url);
      expect(urls).toContain(c.url);
    }

    // Usage: the counts are the calls made; tokens are what the endpoint reported (fixture:
    // 412 prompt, 96 completion of which 64 reasoning, per call).
    const calls = chat.count();
    expect(result.usage).toMatchObject({
      modelCalls: calls,
      searches: search.queries.length,
      fetches: fetch.urls.length,
      inputTokens: 412 * calls,
      outputTokens: 32 * calls,
      reasoningTokens: 64 * calls,
    });
    expect(calls).toBeLessThanOrEqual(8);
    expect(chat.calls.map((c) => c.task)).toEqual(["plan", "extract", "check", "write"]);

    // The wire: model name, 4,096-token cap, bearer key; no JSON mode for a generic server.
    for (const call of chat.calls) {
      expect(call.body.model).toBe("test-model");
      expect(call.body.max_tokens).toBe(4096);
      expect(call.body.response_format).toBeUndefined();
      expect(call.headers.get("authorization")).toBe(`Bearer ${API_KEY}`);
    }
    const ref = job.toRef();
    expect(ref.jobId).toMatch(/^pj_/);
    expect(JSON.stringify(ref)).not.toContain(API_KEY);
  });

  it("keeps an exact quotation and rejects a paraphrase, with a gap that says why", async () => {
    const { chat, client } = setup({
      extract: (call) => ({
        findings: [
          {
            source: sourceId(call, "1,250"),
            claim: "About 1,250 people cycled over the bridge per weekday in 2024.",
            quote: EXACT_2024,
          },
          {
            source: sourceId(call, "1,250"),
            claim: "In 2023 about 1,000 people cycled over the bridge per weekday.",
            quote: "In 2023 the counter showed about 1,000 cyclists each weekday.",
          },
        ],
      }),
      check: (call) => ({
        checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
      }),
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);

    const checked = chat.calls.find((c) => c.task === "check")!.input.findings as { quote: string }[];
    expect(checked.map((f) => f.quote)).toEqual([EXACT_2024]);
    const citations = citationsOf(events);
    expect(citations.map((c) => c.quote)).toEqual([EXACT_2024]);
    expect(citations[0]).toMatchObject({ url: stats.url, verified: true });
    const gap = gapsOf(events).find((g) => g.detail.includes("about 1,000 cyclists"));
    expect(gap).toMatchObject({ kind: "missing-evidence" });
    expect(gap?.detail).toContain("not found verbatim in the source");
  });

  it("rejects a quotation cut out of the middle of a number or word, which would change what the source says", async () => {
    // "250 bicycle commuters per weekday." is a substring of "... of 1,250 bicycle commuters per weekday."
    const CUT = "250 bicycle commuters per weekday. In 2023 the same counter recorded";
    const { chat, client } = setup({
      extract: (call) => ({
        findings: [
          {
            source: sourceId(call, "1,250"),
            claim: "250 people cycled over the bridge per weekday in 2024.",
            quote: CUT,
          },
          {
            source: sourceId(call, "1,250"),
            claim: "In 2023 about 1,000 people cycled over the bridge per weekday.",
            quote: EXACT_2023,
          },
        ],
      }),
      check: (call) => ({
        checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
      }),
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);

    const checked = chat.calls.find((c) => c.task === "check")!.input.findings as { quote: string }[];
    expect(checked.map((f) => f.quote)).toEqual([EXACT_2023]);
    expect(citationsOf(events).map((c) => c.quote)).not.toContain(CUT);
    const gap = gapsOf(events).find((g) => g.detail.includes("250 bicycle commuters per weekday. In 2023"));
    expect(gap).toMatchObject({ kind: "missing-evidence" });
    expect(gap?.detail).toContain("found only inside a longer word or number in the source");
  });

  it("drops a derived number that uses none of its checked inputs", async () => {
    const { client } = setup({
      extract: (call) => ({
        findings: [
          {
            source: sourceId(call, "1,250"),
            claim: "1,250 weekday bicycle commuters in 2024.",
            quote: EXACT_2024,
          },
        ],
      }),
      check: (call) => ({
        checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
      }),
      write: () => ({
        title: "Bridge cycling",
        sections: [
          {
            heading: "Growth",
            paragraphs: [
              "The counter recorded 1,250 weekday bicycle commuters in 2024 [F1]. Commuting has grown by {N1} since the lane opened [F1]. Half of them, {N2} riders, are students [F1].",
            ],
          },
        ],
        derived: [
          { id: "N1", formula: "42", inputs: {}, result: 42, unit: "" },
          {
            id: "N2",
            formula: "1300 / 2",
            inputs: { a: { finding: "F1", value: 1250 } },
            result: 650,
            unit: "",
          },
        ],
      }),
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);
    const { report } = await job.result();

    expect(report).toContain("The counter recorded 1,250 weekday bicycle commuters in 2024 [1].");
    expect(report).not.toContain("42");
    expect(report).not.toContain("650");
    for (const id of ["N1", "N2"]) {
      const gap = gapsOf(events).find((g) => g.detail.includes(`{${id}}`));
      expect(gap?.detail).toContain("the formula uses none of its inputs");
    }
  });

  it("keeps a derived number whose inputs and arithmetic check out and drops one whose arithmetic is wrong", async () => {
    const { client } = setup({
      extract: (call) => ({
        findings: [
          {
            source: sourceId(call, "1,250"),
            claim: "1,250 weekday bicycle commuters in 2024.",
            quote: EXACT_2024,
          },
          {
            source: sourceId(call, "1,250"),
            claim: "1,000 weekday bicycle commuters in 2023.",
            quote: EXACT_2023,
          },
        ],
      }),
      check: (call) => ({
        checks: (call.input.findings as { id: string }[]).map((f) => ({ id: f.id, verdict: "supported" })),
      }),
      write: () => ({
        title: "Bridge cycling",
        sections: [
          {
            heading: "Growth",
            paragraphs: [
              "The counter recorded 1,250 weekday bicycle commuters in 2024 [F1]. Weekday commuting grew by {N1} from 2023 to 2024 [F1][F2]. It has since tripled to {N2} riders [F2].",
            ],
          },
        ],
        derived: [
          {
            id: "N1",
            formula: "(a - b) / b * 100",
            inputs: {
              a: { finding: "F1", value: 1250, date: "2024" },
              b: { finding: "F2", value: "1,000", date: "2023" },
            },
            result: 25,
            unit: "%",
          },
          {
            id: "N2",
            formula: "b * 3",
            inputs: { b: { finding: "F2", value: 1000 } },
            result: 3500,
            unit: "",
          },
        ],
      }),
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);
    const { report, status } = await job.result();

    expect(status).toBe("completed");
    expect(report).toContain("Weekday commuting grew by 25% from 2023 to 2024 [1].");
    expect(report).not.toContain("tripled");
    expect(report).not.toContain("3500");
    const gap = gapsOf(events).find((g) => g.detail.includes("{N2}"));
    expect(gap?.detail).toContain("the arithmetic does not hold: b * 3 = 3000, not 3500");
    // The growth sentence is cited by both findings, over the claim text.
    expect(spans(report, events)).toContain("Weekday commuting grew by 25% from 2023 to 2024");
  });

  it("filters evidence by allowDomains and denyDomains, and deny wins", async () => {
    const { fetch, client } = setup();
    const job = client.research.start({
      model: MODEL,
      query: QUERY,
      sources: {
        urls: ["https://blocked.example.org/opinion/bridge"],
        allowDomains: ["example.org", "example.com", "blocked.example.org"],
        denyDomains: ["blocked.example.org"],
      },
    });
    const events = await collect(job);

    expect(fetch.urls.sort()).toEqual([news.url, stats.url].sort());
    for (const c of citationsOf(events)) expect(c.url).not.toMatch(/blocked|forum/);
    expect(gapsOf(events)).toContainEqual({
      kind: "missing-evidence",
      detail:
        "https://blocked.example.org/opinion/bridge was not read: its domain is denied (denyDomains: blocked.example.org).",
      source: "https://blocked.example.org/opinion/bridge",
    });
  });

  it("keeps identical text once and caps the retained corpus at 60,000 UTF-8 bytes, reporting what was dropped", async () => {
    // 25,000 bytes each: 2-byte "é" makes characters and bytes differ.
    const big = (n: number): Page => {
      const sentence = `Report ${n}: the river bridge café counter recorded many bicycle commuters on weekdays in 2024. `;
      let text = "";
      while (new TextEncoder().encode(text + sentence).length <= 25_000) text += sentence;
      while (new TextEncoder().encode(text).length < 25_000) text += ".";
      return { url: `https://stats.example.org/big/${n}`, title: `Big report ${n}`, text };
    };
    const pages = [big(1), { ...big(1), url: "https://mirror.example.org/big/1" }, big(2), big(3), big(4)];
    const { chat, client } = setup({}, pages);
    const job = client.research.start({
      model: MODEL,
      query: "How many bicycle commuters use the river bridge café counter?",
    });
    const events = await collect(job);

    const retained = chat.calls.filter((c) => c.task === "extract").flatMap((c) => [...c.sources.values()]);
    expect(retained).toHaveLength(3); // the mirror's identical text counted once
    expect(retained.reduce((n, text) => n + new TextEncoder().encode(text).length, 0)).toBe(60_000);
    // One gap per source cut short or left out; a page that finds the corpus full is not dropped silently.
    expect(gapsOf(events).filter((g) => g.kind === "corpus-limit")).toEqual([
      {
        kind: "corpus-limit",
        detail:
          "Only the first 10,000 of 25,000 bytes of https://stats.example.org/big/3 were kept: the retained corpus is capped at 60,000 UTF-8 bytes.",
        source: "https://stats.example.org/big/3",
      },
      {
        kind: "corpus-limit",
        detail:
          "https://stats.example.org/big/4 was not kept: the retained corpus is full (60,000 UTF-8 bytes); 25,000 bytes dropped.",
        source: "https://stats.example.org/big/4",
      },
    ]);
  });

  it("turns an exhausted model-call budget into a partial report with gaps, never an exception", async () => {
    const { chat, client } = setup();
    const job = client.research.start({ model: MODEL, query: QUERY, budget: { modelCalls: 1 } });
    const events = await collect(job);
    const result = await job.result();

    expect(chat.count()).toBe(1);
    expect(result.status).toBe("incomplete");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
    expect(result.report).toMatch(/^# Partial report: /);
    expect(result.report).toContain(
      "the model-call budget (1) was spent before the findings were checked for support",
    );
    expect(result.report).toContain("## Quoted but not yet checked for support");
    const cited = result.citations.length;
    expect(result.gaps.filter((g) => g.kind === "budget-exhausted").map((g) => g.detail)).toEqual([
      "The research plan was skipped to keep the model-call budget (1) for reading; the question was searched as written.",
      "The support check was skipped: the model-call budget (1) is spent.",
      expect.stringMatching(
        /^\d+ finding\(s\) quote their sources exactly but were not checked for support \(the model-call budget \(1\) was spent before the findings were checked for support\): their citations are marked verified: false\.$/,
      ),
    ]);
    // What it does have is still cited, with its exact quotation, but not verified: support was never checked.
    expect(cited).toBeGreaterThan(0);
    for (const citation of result.citations) {
      expect(citation.verified).toBe(false);
      expect(citation.quote).toEqual(expect.any(String));
    }
  });

  it("runs only the searches and fetches the budget allows, and says which were skipped", async () => {
    // A plan that asks for more than it was allowed.
    const { search, fetch, client } = setup({
      plan: () => ({ queries: ["bridge 2024", "bridge 2023", "bridge lane"] }),
    });
    const job = client.research.start({
      model: MODEL,
      query: QUERY,
      sources: { urls: [stats.url, news.url] },
      budget: { searches: 1, fetches: 1 },
    });
    const events = await collect(job);

    expect(search.queries).toHaveLength(1);
    expect(fetch.urls).toEqual([stats.url]);
    const details = gapsOf(events)
      .filter((g) => g.kind === "budget-exhausted")
      .map((g) => g.detail);
    expect(details).toContain(
      '2 planned search(es) were not run (search budget 1): "bridge 2023", "bridge lane".',
    );
    expect(details).toContain(`1 requested URL(s) were not read (fetch budget 1): ${news.url}.`);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("retries a malformed answer once, then renders a partial report with a malformed-output gap", async () => {
    const { chat, client } = setup({
      plan: (_call, n) =>
        n === 0 ? "Here are some queries: bridge, cycling" : { queries: ["river bridge cycling 2024"] },
      write: () => "I'm sorry, I can only answer in prose: cycling grew.",
    });
    const job = client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);
    const result = await job.result();

    // The plan's retry carried the correction and succeeded; the write failed twice.
    expect(chat.count("plan")).toBe(2);
    const retry = chat.calls.filter((c) => c.task === "plan")[1]!.body.messages.at(-1)!;
    expect(retry.content).toContain("That reply could not be used (no JSON object in the reply)");
    expect(chat.count("write")).toBe(2);
    expect(gapsOf(events)).toContainEqual({
      kind: "malformed-output",
      detail: "The model's report draft could not be used: no JSON object in the reply (after one retry).",
    });
    expect(result.status).toBe("incomplete");
    expect(result.report).toContain("## Verified findings");
    expect(result.citations.length).toBeGreaterThan(0);
  });

  it("reads only the given documents (no planning, no search) unless web is true; explicit urls are still fetched", async () => {
    const { chat, search, fetch, client } = setup();
    const documents = [
      {
        id: "memo",
        title: "Council memo",
        text: `${EXACT_2024} ${EXACT_2023} The figures come from the automatic bridge counter.`,
      },
    ];
    const offline = client.research.start({
      model: MODEL,
      query: QUERY,
      sources: { documents, urls: [news.url] },
    });
    const events = await collect(offline);

    expect(search.queries).toEqual([]);
    expect(chat.count("plan")).toBe(0);
    expect(fetch.urls).toEqual([news.url]);
    expect(citationsOf(events).map((c) => c.url)).toContain("document:memo");

    const withWeb = client.research.start({ model: MODEL, query: QUERY, sources: { documents, web: true } });
    await collect(withWeb);
    expect(search.queries.length).toBeGreaterThan(0);
  });

  it("reports an unreadable page as a gap and a failed open_page", async () => {
    const { client } = setup();
    const missing = "https://stats.example.org/cycling/2022";
    const job = client.research.start({ model: MODEL, query: QUERY, sources: { urls: [missing] } });
    const events = await collect(job);

    expect(events).toContainEqual(
      expect.objectContaining({ type: "search", action: "open_page", url: missing, state: "failed" }),
    );
    expect(gapsOf(events)).toContainEqual({
      kind: "unreadable-source",
      detail: `${missing} could not be read: HTTP 404 Not Found.`,
      source: missing,
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("retries a 500 from the chat endpoint and fails the job on a 401 with a typed error that holds no key", async () => {
    const flaky = setup({
      plan: (_call, n) =>
        n === 0
          ? { httpStatus: 500, body: fixtureJson("chat-error-500.json") }
          : { queries: ["bridge cycling 2024"] },
    });
    const ok = flaky.client.research.start({ model: MODEL, query: QUERY });
    await collect(ok);
    expect(flaky.chat.count("plan")).toBe(2);
    expect((await ok.result()).gaps).toEqual([]);

    const denied = setup({ plan: () => ({ httpStatus: 401, body: fixtureJson("chat-error-401.json") }) });
    const job = denied.client.research.start({ model: MODEL, query: QUERY });
    const events = await collect(job);
    const error = await job.result().catch((e: unknown) => e);
    expect(AuthenticationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("Check the portable API key");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });
    expect(denied.chat.count("plan")).toBe(1);
    expect(JSON.stringify([events, job.toRef(), error])).not.toContain(API_KEY);
  });

  it("runs at most maxConcurrentJobs at once; the others wait queued, and their deadline starts at admission", async () => {
    const T0 = Date.parse("2026-03-02T09:00:00.000Z");
    let now = T0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const chat = scriptedChat({
      plan: async (call) => {
        if ((call.input.question as string).startsWith("first")) await held;
        return { queries: ["bridge cycling"] };
      },
    });
    server.use(chat.handler);
    const store = createMemoryStore();
    const client = portableClient({
      search: scriptedSearch().backend,
      fetcher: scriptedFetcher().fetcher,
      store,
      maxConcurrentJobs: 1,
      clock: () => new Date(now),
    });
    const first = client.research.start({ model: MODEL, query: `first ${QUERY}` });
    const second = client.research.start({ model: MODEL, query: `second ${QUERY}` });
    const firstDone = collect(first);
    const secondEvents: ResearchEvent[] = [];
    const secondDone = (async () => {
      for await (const e of second) secondEvents.push(e);
    })();
    await vi.waitFor(() => expect(chat.count("plan")).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(types(secondEvents)).toEqual(["created", "status"]);
    expect(secondEvents[1]).toMatchObject({ status: "queued" });

    // The first job holds its slot past its own deadline; the second was created long ago.
    now = T0 + 200_000;
    release();
    await Promise.all([firstDone, secondDone]);
    expect((await first.result()).status).toBe("incomplete");
    expect(secondEvents.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const record = await store.getJob(second.id!);
    expect(record).toMatchObject({
      createdAt: new Date(T0).toISOString(),
      admittedAt: new Date(T0 + 200_000).toISOString(),
      deadlineAt: new Date(T0 + 380_000).toISOString(),
    });
  });

  it("talks to OpenAI's own endpoint with its key, max_completion_tokens and JSON mode", async () => {
    const chat = scriptedChat({}, "https://api.openai.com/v1");
    server.use(chat.handler);
    const client = new Sonde({
      env: { OPENAI_API_KEY: "sk-proj-test-0123456789abcdef" },
      openai: { organization: "org-test" },
      portable: {
        search: scriptedSearch().backend,
        fetcher: scriptedFetcher().fetcher,
        store: createMemoryStore(),
      },
      retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 10 },
    });
    const job = client.research.start({ model: "portable:openai/gpt-5-mini", query: QUERY });
    expect((await job.result()).status).toBe("completed");
    const [first] = chat.calls;
    expect(first!.body).toMatchObject({
      model: "gpt-5-mini",
      max_completion_tokens: 4096,
      response_format: { type: "json_object" },
    });
    expect(first!.body.max_tokens).toBeUndefined();
    expect(first!.headers.get("authorization")).toBe("Bearer sk-proj-test-0123456789abcdef");
    expect(first!.headers.get("openai-organization")).toBe("org-test");
  });

  it("ignores a wire event it does not know, with a debug log", () => {
    const logged: string[] = [];
    const logger = { debug: (m: string) => logged.push(m), info() {}, warn() {}, error() {} };
    expect(mapWire({ type: "future-event", value: 1 }, logger)).toEqual([]);
    expect(logged).toEqual(["portable: skipping an unknown wire event"]);
    expect(mapWire({ type: "phase", phase: "reading" }, logger)).toEqual([
      { type: "phase", phase: "reading" },
    ]);
  });

  it("rejects a portable request it cannot serve before any network call", () => {
    const client = portableClient();
    expect(() => client.research.start({ model: "portable:nowhere/model", query: QUERY })).toThrow(
      /No chat endpoint named "nowhere"/,
    );
    expect(() => client.research.start({ model: MODEL, query: QUERY })).toThrow(/needs a search backend/);
    expect(() =>
      client.research.start({
        model: MODEL,
        query: QUERY,
        sources: { documents: [{ text: "x" }] },
        maxToolCalls: 3,
      }),
    ).toThrow(/cannot honour "maxToolCalls"/);
    expect(() =>
      new Sonde({ env: {} }).research.start({ model: "portable:openrouter/openai/gpt-5-mini", query: QUERY }),
    ).toThrow(/No openrouter API key/);
  });
});
