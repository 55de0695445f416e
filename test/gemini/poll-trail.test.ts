/**
 * An interaction read back whole (a GET after attach, the poll after a refused resume)
 * still shows its research trail: its recorded searches, pages and tool results become
 * completed `search` / `tool` events, once, before the report, never repeating what the
 * live stream already delivered.
 */
import { describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/events.js";
import type { JobRef } from "../../src/ref.js";
import { createTestServer, json, sse } from "../helpers/test-server.js";
import {
  blocks,
  client,
  collect,
  droppedResponse,
  errorResponse,
  fixture,
  fixtureJson,
  geminiServer,
  running,
} from "./helpers.js";

const server = createTestServer();

const research = fixture("research.sse");
const stored = fixtureJson("research.interaction.json");
const model = "gemini:deep-research-preview-04-2026";

/** The finished trail: what each completed or failed search event names. */
const finished = (events: ResearchEvent[]) =>
  events.flatMap((e) =>
    e.type === "search" && e.state !== "started" ? [`${e.action} ${e.query ?? e.url} ${e.state}`] : [],
  );

async function liveTrail(): Promise<string[]> {
  server.use(...geminiServer({ create: () => sse(research) }).handlers);
  const events = await collect(client().research.start({ model, query: "q" }));
  server.reset();
  return finished(events);
}

async function runUntil(
  stop: (e: ResearchEvent) => boolean,
): Promise<{ before: ResearchEvent[]; ref: JobRef }> {
  server.use(...geminiServer({ create: () => sse(research) }).handlers);
  const job = client().research.start({ model, query: "q" });
  const before: ResearchEvent[] = [];
  for await (const event of job) {
    before.push(event);
    if (stop(event)) break;
  }
  const ref = JSON.parse(JSON.stringify(job.toRef())) as JobRef;
  await job.result().catch(() => {});
  server.reset();
  return { before, ref };
}

describe("gemini: the trail of an interaction read back whole", () => {
  it("attach after the job finished: the stored searches and pages become completed events, before the report", async () => {
    const { before, ref } = await runUntil((e) => e.type === "created");
    expect(finished(before)).toEqual([]);
    server.use(...geminiServer({ get: () => json(stored) }).handlers);
    const rest = await collect(client().research.attach(ref));
    expect(finished(rest)).toEqual([
      "search EU battery regulation 2025 obligations completed",
      "search GB 38031-2025 effective date completed",
      "open_page https://eur-lex.europa.eu/eli/reg/2023/1542/oj completed",
      // The stored result says the page was behind a paywall.
      "open_page https://www.miit.gov.cn/battery-standard failed",
    ]);
    const types = rest.map((e) => e.type);
    expect(types.lastIndexOf("search")).toBeLessThan(types.indexOf("text"));
    // The live stream would have shown the same trail.
    expect(finished(rest)).toEqual(await liveTrail());
  });

  it("a drop, a refused resume and a poll: each finished search once, as the live stream has them", async () => {
    const live = await liveTrail();
    // Cut after the search results, before the pages were read.
    const cut = blocks(research).findIndex((block) => block.includes('"type":"url_context_call"'));
    server.use(
      ...geminiServer({
        create: () => droppedResponse(blocks(research).slice(0, cut).join("")),
        get: (call) => json(call < 1 ? running(stored) : stored),
        stream: () => errorResponse("error-resume-refused.json", 400),
      }).handlers,
    );
    const events = await collect(client().research.start({ model, query: "q" }));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(finished(events)).toEqual(live);
  });

  it("attach with a refused replay after the searches were delivered: only the pages come, once", async () => {
    const live = await liveTrail();
    let searches = 0;
    const { before, ref } = await runUntil(
      (e) => e.type === "search" && e.state === "completed" && ++searches === 2,
    );
    server.use(
      ...geminiServer({
        get: () => json(stored),
        stream: () => errorResponse("error-resume-refused.json", 400),
      }).handlers,
    );
    const rest = await collect(client().research.attach(ref));
    expect(finished(before)).toEqual(live.slice(0, 2));
    expect(finished(rest)).toEqual(live.slice(2));
    expect(rest.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });
});
