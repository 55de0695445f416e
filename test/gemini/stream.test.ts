/**
 * Contract tests over msw: the fixture transcripts (steps schema, plus one legacy
 * recording) mapped onto Sonde's events the way a user consumes them.
 */
import { describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/events.js";
import { createTestServer, json, sse } from "../helpers/test-server.js";
import {
  BASE,
  blocks,
  client,
  collect,
  fixture,
  fixtureJson,
  geminiServer,
  KEY,
  reportOf,
} from "./helpers.js";

const server = createTestServer();

const stored = fixtureJson("research.interaction.json");
const storedText = (stored.steps as { type: string; content?: { text: string }[] }[]).find(
  (step) => step.type === "model_output",
)!.content![0]!.text;

function of<T extends ResearchEvent["type"]>(events: ResearchEvent[], type: T) {
  return events.filter((event): event is Extract<ResearchEvent, { type: T }> => event.type === type);
}

describe("gemini: a Deep Research run, event by event", () => {
  it("submits one background, streamed, stored interaction with the agent config that lets it run unattended", async () => {
    const { handlers, requests } = geminiServer({ create: () => sse(fixture("research.sse")) });
    server.use(...handlers);
    const job = client().research.start({
      model: "gemini:deep-research-preview-04-2026",
      query: "What changed in battery regulation in 2025?",
      instructions: "Cite primary sources.",
      asOf: "2025-12-31",
      output: "a one-page brief",
    });
    await job.result();
    expect(requests).toHaveLength(1);
    const [create] = requests;
    expect(create!.method).toBe("POST");
    expect(create!.url.href).toBe(`${BASE}/interactions`);
    expect(create!.headers.get("x-goog-api-key")).toBe(KEY);
    expect(create!.headers.get("api-revision")).toBe("2026-05-20");
    expect(create!.headers.get("accept")).toBe("text/event-stream");
    const body = JSON.parse(create!.body);
    expect(body).toMatchObject({
      agent: "deep-research-preview-04-2026",
      input: "What changed in battery regulation in 2025?",
      background: true,
      stream: true,
      store: true,
      agent_config: {
        type: "deep-research",
        thinking_summaries: "auto",
        visualization: "off",
        collaborative_planning: false,
      },
    });
    expect(body.system_instruction).toContain("Cite primary sources.");
    expect(body.system_instruction).toContain("2025-12-31");
    expect(body.system_instruction).toContain("a one-page brief");
    expect(body).not.toHaveProperty("tools"); // the agent's defaults
    expect(body).not.toHaveProperty("generation_config");
    expect(create!.url.search).toBe(""); // the key travels in a header, never the URL
  });

  it("maps every event of the transcript: created first, status, phases, thinking, searches, page reads, text, citations, usage, completion", async () => {
    server.use(...geminiServer({ create: () => sse(fixture("research.sse")) }).handlers);
    const job = client().research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    const events = await collect(job);

    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events[0]).toMatchObject({
      type: "created",
      jobId: "v1_ChdEZWVwUmVzZWFyY2hGaXh0dXJlMDAxEhdEZWVwUmVzZWFyY2hGaXh0dXJlMDAx",
      provider: "gemini",
      model: "gemini:deep-research-preview-04-2026",
    });
    expect(events[1]).toMatchObject({ type: "status", status: "running" });
    expect(of(events, "phase").map((e) => e.phase)).toEqual([
      "planning",
      "searching",
      "reading",
      "reasoning",
      "writing",
    ]);
    expect(of(events, "thinking").map((e) => e.delta)).toEqual([
      "**Scoping the question**\n\nI will look for the 2025 application dates of Regulation (EU) 2023/1542 and China's GB 38031-2025.",
      "**Reading the sources**\n\nThe due-diligence obligations were postponed; checking the new date.",
      "**Writing the report**",
    ]);
    expect(
      of(events, "search").map(({ action, query, url, state }) => ({ action, query, url, state })),
    ).toEqual([
      { action: "search", query: "EU battery regulation 2025 obligations", url: undefined, state: "started" },
      { action: "search", query: "GB 38031-2025 effective date", url: undefined, state: "started" },
      {
        action: "search",
        query: "EU battery regulation 2025 obligations",
        url: undefined,
        state: "completed",
      },
      { action: "search", query: "GB 38031-2025 effective date", url: undefined, state: "completed" },
      {
        action: "open_page",
        query: undefined,
        url: "https://eur-lex.europa.eu/eli/reg/2023/1542/oj",
        state: "started",
      },
      {
        action: "open_page",
        query: undefined,
        url: "https://www.miit.gov.cn/battery-standard",
        state: "started",
      },
      {
        action: "open_page",
        query: undefined,
        url: "https://eur-lex.europa.eu/eli/reg/2023/1542/oj",
        state: "completed",
      },
      // A paywalled page is a failed read.
      {
        action: "open_page",
        query: undefined,
        url: "https://www.miit.gov.cn/battery-standard",
        state: "failed",
      },
    ]);
    const report = reportOf(events);
    expect(report).toBe(storedText);
    // Every event after a wire event with an event_id carries it as the resume cursor.
    const text = of(events, "text");
    expect(text.every((e) => e.cursor?.startsWith("ev_"))).toBe(true);

    const last = events.slice(-3);
    expect(last.map((e) => e.type)).toEqual(["usage", "status", "done"]);
    expect(last[1]).toMatchObject({ status: "completed" });
    expect(last[2]).toMatchObject({ status: "completed" });

    const result = await job.result();
    expect(result.status).toBe("completed");
    expect(result.report).toBe(storedText);
  });

  it("converts citation byte offsets to UTF-16 offsets into the final report (emoji and CJK before and inside the spans)", async () => {
    server.use(...geminiServer({ create: () => sse(fixture("research.sse")) }).handlers);
    const job = client().research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    const events = await collect(job);
    const report = reportOf(events);
    const citations = of(events, "citation").map((e) => e.citation);
    const spans = citations.map((c) => report.slice(c.startIndex, c.endIndex));
    expect(spans).toEqual([
      "The EU Battery Regulation (EU) 2023/1542 applies from 18 February 2024; due-diligence duties were postponed to 2027.",
      "The EU Battery Regulation (EU) 2023/1542 applies from 18 February 2024; due-diligence duties were postponed to 2027.",
      "In China, the 新国标 standard GB 38031-2025 takes effect on 1 July 2026 (电池安全).",
      "Café owners won't notice — but carmakers will 🚗.",
    ]);
    expect(citations[0]).toMatchObject({
      url: "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQEuBattReg2023",
      title: "eur-lex.europa.eu",
    });
    // The heading's emoji is two UTF-16 units but four bytes: a naive byte offset would be off by two.
    expect(citations[0]!.startIndex).toBe(report.indexOf("The EU Battery"));
    const result = await job.result();
    expect(result.citations).toHaveLength(4);
  });

  it("reports usage with thought tokens as reasoning, tool-use tokens as input, Google searches from grounding_tool_count, priced at $14 per 1,000 searches", async () => {
    server.use(...geminiServer({ create: () => sse(fixture("research.sse")) }).handlers);
    const result = await client()
      .research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" })
      .result();
    expect(result.usage).toMatchObject({
      inputTokens: 241_200 + 9_030,
      cachedInputTokens: 150_300,
      outputTokens: 58_110,
      reasoningTokens: 4_200,
      searches: 78,
      fetches: 2,
      costSource: "estimate",
    });
    // The cached part of the prompt at the context-caching rate, not the full input rate:
    // (250,230 - 150,300) × $2/M + 150,300 × $0.20/M + 58,110 × $12/M + 4,200 × $12/M + 78 × $14/1000
    expect(result.usage.costUSD).toBeCloseTo(0.19986 + 0.03006 + 0.69732 + 0.0504 + 1.092, 6);
  });

  it("counts searches from the queries as they stream, so the running cost is current before the end", async () => {
    server.use(...geminiServer({ create: () => sse(fixture("research.sse")) }).handlers);
    const events = await collect(
      client().research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" }),
    );
    const usages = of(events, "usage");
    expect(usages[0]!.usage.searches).toBe(2);
    expect(usages[0]!.usage.costUSD).toBeCloseTo(2 * 0.014, 9);
    expect(usages.at(-1)!.usage.searches).toBe(78);
  });

  it("includeThinking: false asks Gemini for no summaries and emits no thinking even if some arrive", async () => {
    const { handlers, requests } = geminiServer({ create: () => sse(fixture("research.sse")) });
    server.use(...handlers);
    const job = client().research.start({
      model: "gemini:deep-research-preview-04-2026",
      query: "q",
      reasoning: { includeThinking: false },
    });
    const events = await collect(job);
    expect(JSON.parse(requests[0]!.body).agent_config.thinking_summaries).toBe("none");
    expect(of(events, "thinking")).toEqual([]);
    expect(reportOf(events)).toBe(storedText);
    expect(job.toRef().resume).toMatchObject({ thinking: false });
  });

  it("tool steps (file search, MCP, code execution) become tool events; a file citation points at the document", async () => {
    const { handlers, requests } = geminiServer({ create: () => sse(fixture("tools.sse")) });
    server.use(...handlers);
    const job = client().research.start({
      model: "gemini:deep-research-preview-04-2026",
      query: "Q3 fleet downtime",
      tools: [
        "web_search",
        { type: "file_search", vectorStoreIds: ["fileSearchStores/fleet-docs"] },
        {
          type: "mcp",
          serverUrl: "https://fleet.example.com/mcp",
          label: "fleet",
          allowedTools: ["get_fleet_stats"],
        },
        "code_interpreter",
      ],
    });
    const events = await collect(job);
    expect(JSON.parse(requests[0]!.body).tools).toEqual([
      { type: "google_search" },
      { type: "url_context" },
      { type: "file_search", file_search_store_names: ["fileSearchStores/fleet-docs"] },
      {
        type: "mcp_server",
        name: "fleet",
        url: "https://fleet.example.com/mcp",
        allowed_tools: [{ tools: ["get_fleet_stats"] }],
      },
      { type: "code_execution" },
    ]);
    const tools = of(events, "tool").map(({ name, callId, state, input, output }) => ({
      name,
      callId,
      state,
      input,
      output,
    }));
    expect(tools).toEqual([
      { name: "file_search", callId: "fs_01", state: "started", input: undefined, output: undefined },
      {
        name: "file_search",
        callId: "fs_01",
        state: "completed",
        input: undefined,
        output: [{ file_name: "q3-maintenance.pdf", text: "Downtime: 88 h (Q2: 100 h)" }],
      },
      {
        name: "mcp",
        callId: "mcp_7",
        state: "started",
        input: { server: "fleet", tool: "get_fleet_stats", arguments: { quarter: "Q3" } },
        output: undefined,
      },
      {
        name: "mcp",
        callId: "mcp_7",
        state: "completed",
        input: undefined,
        output: [{ type: "text", text: '{"downtime_hours":88}' }],
      },
      {
        name: "code_interpreter",
        callId: "ce_3",
        state: "started",
        input: { code: "print(round((100-88)/100*100))", language: "python" },
        output: undefined,
      },
      { name: "code_interpreter", callId: "ce_3", state: "completed", input: undefined, output: "12\n" },
    ]);
    const result = await job.result();
    expect(result.citations).toEqual([
      {
        url: "fileSearchStores/fleet-docs/documents/q3-maintenance",
        title: "q3-maintenance.pdf",
        startIndex: 0,
        endIndex: "Fleet downtime fell 12% after the retrofit".length,
      },
    ]);
    expect(result.usage).toMatchObject({ inputTokens: 19_000, outputTokens: 1_200, reasoningTokens: 250 });
  });

  it("an annotation that arrives before the text it covers is held until that text has arrived", async () => {
    const all = blocks(fixture("research.sse"));
    const annotationAt = all.findIndex((block) => block.includes("text_annotation_delta"));
    // Move the annotations ahead of the last two text deltas.
    const reordered = [
      ...all.slice(0, annotationAt - 2),
      all[annotationAt]!,
      ...all.slice(annotationAt - 2, annotationAt),
      ...all.slice(annotationAt + 1),
    ];
    server.use(...geminiServer({ create: () => sse(reordered.join("")) }).handlers);
    const job = client().research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    const events = await collect(job);
    const report = reportOf(events);
    expect(report).toBe(storedText);
    const citations = of(events, "citation");
    // The first two cite text that had arrived; the rest wait for their text.
    const firstCitation = events.indexOf(citations[0]!);
    const lastText = events.findLastIndex((e) => e.type === "text");
    expect(firstCitation).toBeLessThan(lastText);
    expect(events.indexOf(citations[3]!)).toBeGreaterThan(lastText);
    expect(citations.map((e) => report.slice(e.citation.startIndex, e.citation.endIndex))).toEqual([
      "The EU Battery Regulation (EU) 2023/1542 applies from 18 February 2024; due-diligence duties were postponed to 2027.",
      "The EU Battery Regulation (EU) 2023/1542 applies from 18 February 2024; due-diligence duties were postponed to 2027.",
      "In China, the 新国标 standard GB 38031-2025 takes effect on 1 July 2026 (电池安全).",
      "Café owners won't notice — but carmakers will 🚗.",
    ]);
  });

  it("budget_exceeded ends the job incomplete, with a gap saying why and the report so far", async () => {
    const transcript = fixture("research.sse").replace(
      '"status":"completed","usage"',
      '"status":"budget_exceeded","usage"',
    );
    server.use(...geminiServer({ create: () => sse(transcript) }).handlers);
    const job = client().research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    const result = await job.result();
    expect(result.status).toBe("incomplete");
    expect(result.gaps).toEqual([
      { kind: "budget-exhausted", detail: expect.stringContaining("budget_exceeded") },
    ]);
    expect(result.report).toBe(storedText);
  });

  it("ignores event types it does not know, without failing the job", async () => {
    const transcript = fixture("research.sse").replace(
      "event: step.start\n",
      'event: interaction.heartbeat\ndata: {"event_type":"interaction.heartbeat","event_id":"hb_1"}\n\nevent: step.start\n',
    );
    server.use(...geminiServer({ create: () => sse(transcript) }).handlers);
    const result = await client()
      .research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" })
      .result();
    expect(result.report).toBe(storedText);
  });

  it("replays a legacy-schema recording (content.* events, interaction.start/complete) through the same mapping", async () => {
    server.use(...geminiServer({ create: () => sse(fixture("legacy-research.sse")) }).handlers);
    const job = client().research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    const events = await collect(job);
    expect(events[0]).toMatchObject({
      type: "created",
      jobId: "v1_ChdMZWdhY3lGaXh0dXJlMDA1YWJjZGVmZxIXTGVnYWN5Rml4dHVyZTAwNWFiY2RlZmc",
    });
    expect(of(events, "thinking").map((e) => e.delta)).toEqual(["**Checking production status**"]);
    expect(of(events, "search").map((e) => [e.query, e.state])).toEqual([
      ["solid-state battery production 2026", "started"],
      ["solid-state battery production 2026", "completed"],
    ]);
    const result = await job.result();
    const report =
      "Solid-state batteries remain pre-commercial in 2026; pilot lines (試作ライン) opened in Japan and Korea 🇯🇵.";
    expect(result.report).toBe(report);
    expect(result.citations).toHaveLength(1);
    const [citation] = result.citations;
    expect(report.slice(citation!.startIndex, citation!.endIndex)).toBe(
      "pilot lines (試作ライン) opened in Japan and Korea 🇯🇵.",
    );
    expect(result.status).toBe("completed");
    expect(result.usage).toMatchObject({ inputTokens: 83_000, outputTokens: 12_000, reasoningTokens: 1_500 });
  });

  it("the default base URL is Google's v1beta endpoint", async () => {
    const { handlers, requests } = geminiServer(
      { create: () => sse(fixture("research.sse")) },
      "https://generativelanguage.googleapis.com/v1beta",
    );
    server.use(...handlers);
    const result = await client({ gemini: { apiKey: KEY } })
      .research.start({ model: "gemini:deep-research-max-preview-04-2026", query: "q" })
      .result();
    expect(result.status).toBe("completed");
    expect(requests[0]!.url.href).toBe("https://generativelanguage.googleapis.com/v1beta/interactions");
    expect(JSON.parse(requests[0]!.body).agent).toBe("deep-research-max-preview-04-2026");
  });

  it("a create answered with a JSON Interaction (no stream) is followed by GET and stream, not resubmitted", async () => {
    const transcript = fixture("research.sse");
    const { handlers, requests } = geminiServer({
      create: () =>
        json({
          id: "v1_ChdEZWVwUmVzZWFyY2hGaXh0dXJlMDAxEhdEZWVwUmVzZWFyY2hGaXh0dXJlMDAx",
          status: "in_progress",
          object: "interaction",
          agent: "deep-research-preview-04-2026",
        }),
      get: () => json({ ...stored, status: "in_progress", steps: undefined }),
      stream: () => sse(transcript),
    });
    server.use(...handlers);
    const events = await collect(
      client().research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" }),
    );
    expect(reportOf(events)).toBe(storedText);
    expect(of(events, "created")).toHaveLength(1);
    expect(requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });
});
