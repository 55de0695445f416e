/**
 * An iterated job's `toRef()` at every event, on the streaming engines that resume (OpenAI,
 * Gemini, Perplexity): with network reads cut anywhere (so the job's iterator maps many
 * events of one read inside `next()`) and the stream dropped and resumed, the job delivers
 * what one uncut stream delivers, and attaching the ref taken after event k delivers exactly
 * events k+1… of it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type JobRef, type ResearchEvent, Sonde, type SondeOptions } from "../../src/index.js";
import { engines as bench } from "../bench/transcripts.mjs";
import { eventsAfter, fixture, fixtureJson, running } from "../gemini/helpers.js";
import { longTranscript, resumeBytes } from "../openai/transcript.js";
import { comparable, encoder, pieces, RUNS, sseHead } from "./harness.js";

/** `bytes` in pieces cut at `cuts`; cut short at `dropAt` by a reset (a drop), if given. */
function body(bytes: Uint8Array, cuts: readonly number[], dropAt: number | undefined): Response {
  const end = dropAt === undefined ? bytes.length : Math.min(dropAt, bytes.length);
  const chunks = pieces(bytes.subarray(0, end), cuts);
  let i = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(controller) {
        if (i < chunks.length) controller.enqueue(chunks[i++]!.slice());
        else if (dropAt !== undefined) controller.error(new TypeError("terminated"));
        else controller.close();
      },
    }),
    sseHead,
  );
}

interface Engine {
  name: string;
  model: string;
  options: SondeOptions;
  length: number;
  /** The stream a request asks for: the whole transcript, or what follows its resume point. */
  stream(request: Request): Uint8Array | Response;
}

const openai = longTranscript({ seed: 3, deltas: 120, rounds: 3 });
const gemini = fixture("research.sse");
const geminiStored = fixtureJson("research.interaction.json");
const perplexity = bench.perplexity!.transcript(60).body as string;
const perplexityBlocks = perplexity.split(/(?<=\n\n)/).filter((block) => block.trim());
const sequenceOf = (block: string) => Number(/"sequence_number":(\d+)/.exec(block)?.[1] ?? -1);

const engines: Engine[] = [
  {
    name: "openai",
    model: "openai:o4-mini-deep-research",
    options: {
      openai: { apiKey: "sk-test-every-ref", baseURL: "https://api.openai.test/v1" },
      clock: () => new Date("2026-06-01T00:00:00Z"),
    },
    length: openai.bytes.length,
    stream(request) {
      const after = new URL(request.url).searchParams.get("starting_after");
      return resumeBytes(openai, after === null ? undefined : Number(after));
    },
  },
  {
    name: "gemini",
    model: "gemini:deep-research-preview-04-2026",
    options: { gemini: { apiKey: "AIzaSyEveryRef0123456789", baseURL: "https://gemini.test/v1beta" } },
    length: encoder.encode(gemini).length,
    stream(request) {
      const url = new URL(request.url);
      // Still running when looked at: an attached job replays the stream.
      if (request.method === "GET" && url.searchParams.get("stream") !== "true")
        return new Response(JSON.stringify(running(geminiStored)), {
          headers: { "content-type": "application/json" },
        });
      return encoder.encode(eventsAfter(gemini, url.searchParams.get("last_event_id")));
    },
  },
  {
    name: "perplexity",
    model: "perplexity:medium",
    options: { perplexity: { apiKey: "pplx-every-ref", baseURL: "https://perplexity.test" } },
    length: encoder.encode(perplexity).length,
    stream(request) {
      const after = new URL(request.url).searchParams.get("starting_after");
      const rest = perplexityBlocks.filter((block) => after === null || sequenceOf(block) > Number(after));
      return encoder.encode(rest.join(""));
    },
  },
];

function client(engine: Engine, cuts: readonly number[], drops: readonly (number | undefined)[]): Sonde {
  let calls = 0;
  return new Sonde({
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 2 },
    env: {},
    ...engine.options,
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const stream = engine.stream(new Request(input, init));
      return stream instanceof Response ? stream : body(stream, cuts, drops[calls++]);
    },
  });
}

/** Every event, with the ref taken right after it (once the job has an id). */
async function withRefs(job: AsyncIterable<ResearchEvent> & { id: string | undefined; toRef(): JobRef }) {
  const seen: { event: ResearchEvent; ref?: JobRef }[] = [];
  for await (const event of job)
    seen.push({ event, ...(job.id && { ref: JSON.parse(JSON.stringify(job.toRef())) }) });
  return seen;
}

describe.each(engines)("$name: a ref taken at any event of an iterated job", (engine) => {
  it("attached, delivers exactly the events after it, whatever the reads and drops", async () => {
    const start = (sonde: Sonde) => sonde.research.start({ model: engine.model, query: "q" });
    const whole = (await withRefs(start(client(engine, [], [])))).map(({ event }) => event);
    let attached = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(), { maxLength: 60 }),
        // Drops after the job has its id (a drop before it ends the job: nothing to resume).
        fc.array(fc.option(fc.nat(), { nil: undefined }), { maxLength: 2 }),
        fc.nat(),
        async (cuts, drops, pick) => {
          const at = drops.map((d) => (d === undefined ? undefined : 1500 + (d % (engine.length - 1500))));
          const seen = await withRefs(start(client(engine, cuts, at)));
          expect(comparable(seen.map(({ event }) => event))).toEqual(comparable(whole));
          // A handful of refs per run, spread over the job (every one over the runs).
          for (let k = 0; k < 6; k++) {
            const i = (pick + k * 7919) % (seen.length - 1);
            const ref = seen[i]!.ref;
            if (!ref) continue;
            const rest = await withRefs(client(engine, cuts, []).research.attach(ref));
            attached++;
            expect(comparable(rest.map(({ event }) => event)), `ref after event ${i}`).toEqual(
              comparable(whole.slice(i + 1)),
            );
          }
        },
      ),
      { numRuns: RUNS },
    );
    expect(attached).toBeGreaterThan(RUNS * 4);
  }, 60_000);
});
