/**
 * A result()-only job joins a read's text deltas (src/protocols/responses/delta-run.ts): its
 * partial result and its ref must be what an iterated job of the same stream gives, whatever
 * the deltas hold. These streams end their read with an empty delta, as servers sometimes
 * send: it maps to no event, so the mapper's last batch (a ref's `resume.last`) stays at the
 * event before it, which must be that one delta and not the joined run.
 */
import { describe, expect, it } from "vitest";
import type { ResearchResult } from "../../src/aggregate.js";
import { framing, sseText } from "../helpers/sse.js";
import { createTestServer, json, sse } from "../helpers/test-server.js";
import { BASE, collect, makeClient, STREAMING_MODEL } from "./helpers.js";
import { RESPONSE_ID } from "./transcript.js";

const server = createTestServer();

const lifecycle = (status: string, sequence: number) => ({
  type: status === "queued" ? "response.created" : "response.in_progress",
  sequence_number: sequence,
  response: { id: RESPONSE_ID, object: "response", status, background: true, output: [] },
});
const delta = (sequence: number, text: string) => ({
  type: "response.output_text.delta",
  sequence_number: sequence,
  item_id: "msg_1",
  output_index: 0,
  content_index: 0,
  delta: text,
});

/** One read (one chunk) of `deltas`, then the connection cut; every reconnect is a 503. */
function cutThenDown(deltas: string[]): void {
  const events = [
    lifecycle("queued", 0),
    lifecycle("in_progress", 1),
    ...deltas.map((d, i) => delta(i + 2, d)),
  ];
  server.route({
    [`POST ${BASE}/responses`]: sse(sseText(events, framing.openai), { end: "drop" }),
    [`GET ${BASE}/responses/:id`]: json({ error: { message: "down" } }, { status: 503 }),
  });
}

const oneTry = () => makeClient({ retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 } });
const start = () => oneTry().research.start({ model: STREAMING_MODEL, query: "battery rules" });
const partialOf = (job: ReturnType<typeof start>) =>
  job.result().then(
    () => undefined,
    (error: { partial?: ResearchResult }) => error.partial,
  );

describe("result() alone: a read ending in an empty delta", () => {
  it.each([
    { why: "after a run", deltas: ["ab", "cd", "ef", ""] },
    { why: "after a run, twice", deltas: ["ab", "cd", "ef", "", ""] },
    { why: "inside a run", deltas: ["ab", "", "cd", "ef", "gh", ""] },
  ])("$why: the same partial result and ref as an iterated job", async ({ deltas }) => {
    cutThenDown(deltas);
    const iterated = start();
    await collect(iterated);
    const expected = await partialOf(iterated);
    cutThenDown(deltas);
    const alone = start();
    const partial = await partialOf(alone);
    expect(partial?.report).toBe(deltas.join(""));
    expect(partial).toEqual(expected);
    expect(alone.toRef()).toEqual(iterated.toRef());
  });
});
