/**
 * A job whose result arrives as a polled Response still shows its research trail: the
 * body's web_search_call items become completed `search` events and its file-search, MCP
 * and code-interpreter items `tool` events, once, before the report, and never again for
 * what a live stream already delivered (also after attach with a refused replay).
 */
import { describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/events.js";
import { sseBlocks, sseData } from "../helpers/sse.js";
import { createTestServer, dropAfter, json, jsonFixture } from "../helpers/test-server.js";
import {
  BASE,
  collect,
  fixture,
  fixtureJson,
  makeClient,
  ofType,
  POLL_MODEL,
  STREAMING_MODEL,
} from "./helpers.js";

const server = createTestServer();

/** A poll-only job: queued on create, then `body` on the first GET. */
function pollOnly(body: Record<string, unknown>) {
  server.route({
    [`POST ${BASE}/responses`]: json({
      ...fixtureJson<Record<string, unknown>>("poll/pro.queued.json"),
      id: body.id,
    }),
    [`GET ${BASE}/responses/:id`]: json(body),
  });
}

const trail = (events: ResearchEvent[]) =>
  events
    .filter((e) => e.type === "search" || e.type === "tool")
    .map((e) =>
      e.type === "search"
        ? {
            search: e.action,
            state: e.state,
            ...(e.query && { query: e.query }),
            ...(e.url && { url: e.url }),
          }
        : { tool: e.name, state: e.state },
    );

describe("openai: the trail of a polled job", () => {
  it("a poll-only job's web_search_call items become completed search events, before the report", async () => {
    pollOnly(fixtureJson("poll/pro.completed.json"));
    const events = await collect(makeClient().research.start({ model: POLL_MODEL, query: "q" }));
    expect(trail(events)).toEqual([
      { search: "search", state: "completed", query: "EU battery regulation due diligence postponed" },
      { search: "open_page", state: "completed", url: "https://www.meti.go.jp/policy/battery" },
    ]);
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("search")).toBeLessThan(types.indexOf("text"));
  });

  it("search, open_page and find_in_page items keep their action, query or URL", async () => {
    pollOnly(fixtureJson("poll/research-web-search.completed.json"));
    const events = await collect(makeClient().research.start({ model: POLL_MODEL, query: "q" }));
    expect(ofType(events, "search").map((e) => [e.action, e.state])).toEqual([
      ["search", "completed"],
      ["open_page", "completed"],
      ["find_in_page", "completed"],
    ]);
    expect(ofType(events, "search")[0]!.query).toBe(
      "EU Battery Regulation 2023/1542 obligations applying 2025",
    );
    expect(ofType(events, "search")[2]).toMatchObject({
      url: "https://example.org/eu-battery-regulation-timeline",
      query: expect.any(String),
    });
  });

  it("file-search, MCP and code-interpreter items become tool events with name and state", async () => {
    // The final Response of the recorded tools stream, read back by a poll.
    const completed = sseData(fixture("tools.sse")).find((e) => e.type === "response.completed")!;
    pollOnly(completed.response as Record<string, unknown>);
    const events = await collect(makeClient().research.start({ model: POLL_MODEL, query: "q" }));
    expect(trail(events)).toEqual([
      { tool: "mcp", state: "completed" },
      { tool: "file_search", state: "completed" },
      { tool: "mcp", state: "completed" },
      { tool: "code_interpreter", state: "completed" },
    ]);
    expect(ofType(events, "tool")[2]).toMatchObject({
      callId: "mcp_0c72b1033351981300690ccf7fa1",
      input: { server: "filings", tool: "search_filings" },
    });
  });

  it("a ref taken between the polled searches: after attach, the rest of the trail and the report, once", async () => {
    pollOnly(fixtureJson("poll/pro.completed.json"));
    const sonde = makeClient();
    const whole = await collect(sonde.research.start({ model: POLL_MODEL, query: "q" }));
    const first = sonde.research.start({ model: POLL_MODEL, query: "q" });
    const before: ResearchEvent[] = [];
    let ref = "";
    for await (const event of first) {
      before.push(event);
      if (event.type === "search") {
        ref = JSON.stringify(first.toRef());
        break;
      }
    }
    const after = await collect(makeClient().research.attach(JSON.parse(ref)));
    const strip = (list: ResearchEvent[]) =>
      list.filter((e) => e.type !== "status").map(({ seq: _seq, cursor: _cursor, ...rest }) => rest);
    // Together, exactly the uninterrupted run: nothing lost, nothing twice.
    expect(strip([...before, ...after])).toEqual(strip(whole));
  });

  describe("after a live stream", () => {
    const streamed = fixture("research-web-search.sse");
    const wire = sseData(streamed);
    const finished = fixtureJson("poll/research-web-search.completed.json");
    const responseId = finished.id as string;
    // Cut right after the first search item is done; its completion was delivered live.
    const cutAt = wire.findIndex((e) => e.type === "response.output_item.done");

    function cutThenRefuse() {
      const upTo = sseBlocks(streamed).findIndex((frame) =>
        frame.includes(`"sequence_number":${wire[cutAt]!.sequence_number},`),
      );
      server.route({
        [`POST ${BASE}/responses`]: dropAfter(streamed, upTo + 1),
        [`GET ${BASE}/responses/${responseId}`]: (call) =>
          call.url.searchParams.get("stream") === "true"
            ? jsonFixture("openai/http/stream-too-old.400.json", { status: 400 })
            : json(finished),
      });
    }

    const completedSearches = (events: ResearchEvent[]) =>
      ofType(events, "search")
        .filter((e) => e.state !== "started")
        .map((e) => e.action);

    it("a drop, a refused resume and a poll: each search completes once", async () => {
      cutThenRefuse();
      const events = await collect(makeClient().research.start({ model: STREAMING_MODEL, query: "q" }));
      expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
      expect(completedSearches(events)).toEqual(["search", "open_page", "find_in_page"]);
    });

    it("attach after the process died, with a refused replay: the searches not yet delivered, once", async () => {
      cutThenRefuse();
      const first = makeClient().research.start({ model: STREAMING_MODEL, query: "q" });
      const before: ResearchEvent[] = [];
      let ref = "";
      for await (const event of first) {
        before.push(event);
        if (event.type === "search" && event.state === "completed") {
          ref = JSON.stringify(first.toRef());
          break; // the process dies here
        }
      }
      const after = await collect(makeClient().research.attach(JSON.parse(ref)));
      expect(completedSearches(before)).toEqual(["search"]);
      expect(completedSearches(after)).toEqual(["open_page", "find_in_page"]);
      expect(after.at(-1)).toMatchObject({ type: "done", status: "completed" });
    });
  });
});
