/**
 * A Perplexity job whose result arrives as a polled body still shows its research trail:
 * the body's `search_results` items become completed `search` events (one per query) and
 * its `fetch_url_results` items completed `open_page` events, once, before the report, and
 * never again for a search the live stream already completed from `response.reasoning.*`
 * (also after attach with a refused replay). Fixtures: test/fixtures/perplexity/ (P6 captures).
 */
import { describe, expect, it } from "vitest";
import { type ResearchEvent, Sonde } from "../../src/index.js";
import { framing, sseText } from "../helpers/sse.js";
import { createTestServer, json, sse } from "../helpers/test-server.js";
import { collect, fastRetry, fixtureText, replay, sseEvents, transcript } from "./helpers.js";

const BASE = "https://perplexity.test";
const model = "perplexity:medium";
const query = "Vector DB pricing?";
const RID = "resp_d60f3e03-57e0-4048-994f-69b29a6d2ce7";

const server = createTestServer();

const client = (settings: Record<string, unknown> = {}) =>
  new Sonde({
    perplexity: { apiKey: "pplx-test-0123456789abcdef", baseURL: BASE, ...settings },
    retry: fastRetry,
    idleTimeoutMs: 2_000,
    env: {},
  });

const background = transcript("perplexity", "agent-background.json").exchanges;
const completedSnapshot = background[2]!.response.body;
const sampleEvents = sseEvents(fixtureText("perplexity", "agent-sample.sse"));
const expired = (
  JSON.parse(fixtureText("perplexity", "agent-errors.json")) as Record<
    string,
    { status: number; body: unknown }
  >
).resumeExpired400!;

/** What the body's trail says: every search event with its state and query or URL. */
const trail = (events: ResearchEvent[]) =>
  events.flatMap((e) => (e.type === "search" ? [[e.action, e.state, e.query ?? e.url]] : []));
const completed = (events: ResearchEvent[]) => trail(events).filter(([, state]) => state === "completed");

const PINECONE = ["search", "completed", "Pinecone pricing official"];
const WEAVIATE = ["search", "completed", "Weaviate Cloud pricing official"];
const QDRANT = ["open_page", "completed", "https://qdrant.tech/pricing/"];

/** The sample stream up to its live search's results, then a refused resume and a poll. */
function cutAfterLiveSearch() {
  const head = sampleEvents.slice(0, 4); // …, search_queries, search_results (sequence_number 3)
  server.route({
    [`POST ${BASE}/v1/agent`]: sse(sseText(head, framing.perplexity), {
      headers: { "content-type": "text/event-stream" },
    }),
    [`GET ${BASE}/v1/agent/${RID}`]: (call) =>
      call.url.searchParams.get("stream") === "true"
        ? json(expired.body, { status: expired.status })
        : json(completedSnapshot),
  });
}

describe("perplexity: the trail of a polled job", () => {
  it("poll-only: the snapshot's search_results and fetch_url_results items become completed searches, once, before the report", async () => {
    replay(server, BASE, background);
    const events = await collect(client({ stream: false }).research.start({ model, query }));
    // The in_progress snapshot's partial search_results adds nothing: the finished body is read once.
    expect(trail(events)).toEqual([PINECONE, WEAVIATE, QDRANT]);
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("search")).toBeLessThan(types.indexOf("text"));
  });

  it("a live search, a drop, a refused resume and a poll: the live search is not repeated, the rest come once", async () => {
    cutAfterLiveSearch();
    const job = client().research.start({ model, query });
    const events = await collect(job);
    expect((await job.result()).status).toBe("completed");
    expect(trail(events)).toEqual([
      ["search", "started", "Pinecone pricing official"],
      PINECONE,
      WEAVIATE,
      QDRANT,
    ]);
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("search")).toBeLessThan(types.indexOf("text"));
  });

  it("attach after the process died, with a refused replay: only the searches not yet delivered, once", async () => {
    cutAfterLiveSearch();
    const first = client().research.start({ model, query });
    const before: ResearchEvent[] = [];
    let ref = "";
    for await (const event of first) {
      before.push(event);
      if (event.type === "search" && event.state === "completed") {
        ref = JSON.stringify(first.toRef());
        break; // the process dies here
      }
    }
    const after = await collect(client().research.attach(JSON.parse(ref)));
    expect(completed(before)).toEqual([PINECONE]);
    expect(completed(after)).toEqual([WEAVIATE, QDRANT]);
    expect(after.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });
});
