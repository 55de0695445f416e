/**
 * One measured run in a fresh process: `node run-one.mjs <sdk|iterate|floor|floor-iterate> <engine> <url> [--memory|--warm]`.
 * `sdk` awaits `job.result()` alone; `iterate` consumes every event with `for await` (as an
 * app that shows progress does), then takes the result. `floor-iterate` is the floor handed
 * out one delta per `for await` step by the thinnest iterator (see `floorEvents`).
 * Prints one JSON line: stream time (request to last delta), report length, and with
 * `--memory` (run under --expose-gc) the heap retained after GC while the finished job and
 * its result are held. With `--warm`, the same job (or floor read) runs once untimed first, and
 * the second one is timed: what a process that has run a job before pays (see compare.mjs).
 */
import { createParser } from "eventsource-parser";
import { engines, floorDelta } from "./transcripts.mjs";

const [mode, engine, url, ...flags] = process.argv.slice(2);
const spec = engines[engine];
const memory = flags.includes("--memory");
const warm = flags.includes("--warm");

function heap() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

/** The floor's request: the transcript, as the loopback server sends it for any request. */
const submit = () =>
  fetch(`${url}${spec.path}`, {
    method: "POST",
    body: "{}",
    headers: { "content-type": "application/json" },
  });

/** The floor: fetch, eventsource-parser fed per network read, JSON.parse, concatenated deltas. */
async function floor() {
  const response = await submit();
  let report = "";
  const parser = createParser({
    onEvent(message) {
      if (message.data === "[DONE]") return;
      const delta = floorDelta(engine, JSON.parse(message.data));
      if (typeof delta === "string") report += delta;
    },
  });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read())
    parser.feed(decoder.decode(read.value, { stream: true }));
  return { report };
}

/**
 * The floor as a `for await` reads it: the same fetch, parser and `JSON.parse`, each delta one
 * `{ type, delta }` object handed out by a hand-written async iterator (`next()` resolves at
 * once from what the last network read parsed; it reads the network only when that is used
 * up). The least any client pays to deliver a stream one event per `for await` step.
 */
class FloorEvents {
  #buffer = [];
  #at = 0;
  #reader;
  #parser;
  #decoder = new TextDecoder();

  constructor(reader) {
    this.#reader = reader;
    this.#parser = createParser({
      onEvent: (message) => {
        if (message.data === "[DONE]") return;
        const delta = floorDelta(engine, JSON.parse(message.data));
        if (typeof delta === "string") this.#buffer.push({ type: "text", delta });
      },
    });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next() {
    if (this.#at < this.#buffer.length)
      return Promise.resolve({ done: false, value: this.#buffer[this.#at++] });
    return this.#read();
  }

  async #read() {
    this.#buffer = [];
    this.#at = 0;
    while (this.#buffer.length === 0) {
      const read = await this.#reader.read();
      if (read.done) return { done: true, value: undefined };
      this.#parser.feed(this.#decoder.decode(read.value, { stream: true }));
    }
    return { done: false, value: this.#buffer[this.#at++] };
  }
}

async function floorEvents() {
  const response = await submit();
  let report = "";
  for await (const event of new FloorEvents(response.body.getReader())) report += event.delta;
  return { report };
}

// Cold import, timed; before the memory baseline, so code is not counted as retained data.
// `new Sonde()` loads an engine's code with its first job (src/lazy-engine.ts): it is loaded
// here, with the import, so that the stream time is the job's own work, as in earlier sessions.
const importStarted = performance.now();
const sdkMode = mode === "sdk" || mode === "iterate";
const sonde = sdkMode ? await import("../../dist/index.js") : undefined;
if (sdkMode) await import(`../../dist/providers/${spec.model.slice(0, spec.model.indexOf(":"))}.js`);
const importMs = sdkMode ? performance.now() - importStarted : undefined;

async function sdk() {
  const { Sonde } = sonde;
  // Before the OpenAI deep-research models retired (2026-07-23), as the OpenAI tests run them.
  const client = new Sonde({ ...spec.settings(url), env: {}, clock: () => new Date("2026-06-01T00:00:00Z") });
  const job = client.research.start({ model: spec.model, query: "bench" });
  if (mode === "iterate") for await (const _ of job);
  const result = await job.result();
  // The job is held too (with --memory): its engine's state counts as retained.
  return { report: result.report, result, job };
}

const read = sdkMode ? sdk : mode === "floor-iterate" ? floorEvents : floor;
if (warm) await read();
const base = memory ? heap() : 0;
const started = performance.now();
const outcome = await read();
const ms = performance.now() - started;
const line = { mode, engine, ms, chars: outcome.report.length, importMs };
if (memory) {
  // A finished job's transport unwinds in the next few ticks (return() of its readers is not awaited).
  await new Promise((resolve) => setTimeout(resolve, 50));
  const held = outcome.result ?? outcome;
  if (outcome.job && outcome.job.status !== "completed") throw new Error(`job ended ${outcome.job.status}`);
  line.retainedBytes = heap() - base;
  // A flat string costs 1 byte per character when all are Latin-1, else 2.
  line.reportBytes = /[^\u0000-\u00ff]/.test(held.report) ? held.report.length * 2 : held.report.length;
}
console.log(JSON.stringify(line));
