/**
 * Side-by-side bench (`npm run bench`): Sonde against the floor — the same bytes through
 * fetch + eventsource-parser + JSON.parse + concatenating deltas — on the same transcripts
 * served over loopback, each run in a fresh process, rotating the SDK read two ways (`result()`
 * alone, and `for await` over every event) and the floor. Prints medians and floor/SDK
 * time ratios (≥ 1 means as fast as the floor) with the range of each round's own ratio, the Perplexity
 * citation path against the same stream without citations, cold import, and retained
 * memory at 1,000,000 deltas.
 *
 * The same runs again with one job run first in each process (BENCH_WARM=0 skips) separate
 * what a process pays once, with its first job, from what every delta costs.
 *
 * The floor is also run read by `for await` (run-one.mjs `floor-iterate`: each delta handed
 * out by the thinnest hand-written async iterator), to show what delivering a stream one
 * event per `for await` step costs in itself, and Sonde's `for await` against that.
 *
 * Env: BENCH_DELTAS (100000), BENCH_RUNS (5), BENCH_MEMORY_DELTAS (1000000; 0 skips),
 * BENCH_ENGINES (comma-separated; default openai,gemini,perplexity,openrouter), BENCH_CITATIONS (0 skips),
 * BENCH_WARM (0 skips).
 */
import { execFile } from "node:child_process";
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { engines } from "./transcripts.mjs";

const run = promisify(execFile);
const here = fileURLToPath(new URL(".", import.meta.url));
const DELTAS = Number(process.env.BENCH_DELTAS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const MEMORY_DELTAS = Number(process.env.BENCH_MEMORY_DELTAS ?? 1_000_000);
const ENGINES = (process.env.BENCH_ENGINES ?? "openai,gemini,perplexity,openrouter").split(",");
const CITATIONS = process.env.BENCH_CITATIONS !== "0";
const WARM = process.env.BENCH_WARM !== "0";

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Serves one engine's transcript for whatever it is asked (POST submits and stream GETs). */
async function serve(body) {
  const bytes = Buffer.from(body);
  const server = createServer(async (request, response) => {
    for await (const _ of request);
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.end(bytes);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => server.close(r)),
  };
}

async function once(mode, engine, url, extra = [], flags = []) {
  const args = [...extra, `${here}run-one.mjs`, mode, engine, url, ...flags];
  if (extra.includes("--expose-gc")) args.push("--memory");
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/** The SDK's two ways of reading a job: `result()` alone, and `for await` over every event. */
const SDK_MODES = ["sdk", "iterate"];

/** `flags` go to every run (`--warm`: each process runs the job once untimed first). */
async function sideBySide(engine, deltas = DELTAS, sdkModes = SDK_MODES, flags = []) {
  const { body, report } = engines[engine].transcript(deltas);
  const server = await serve(body);
  const modes = [...sdkModes, "floor", ...(sdkModes.includes("iterate") ? ["floor-iterate"] : [])];
  const times = Object.fromEntries(modes.map((mode) => [mode, []]));
  const imports = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      // Rotate which goes first, so drift on a shared machine hits all alike.
      for (let k = 0; k < modes.length; k++) {
        const mode = modes[(i + k) % modes.length];
        const line = await once(mode, engine, server.url, [], flags);
        if (line.chars !== report.length)
          throw new Error(`${mode} ${engine}: report of ${line.chars}, expected ${report.length}`);
        times[mode].push(line.ms);
        if (line.importMs !== undefined) imports.push(line.importMs);
      }
    }
  } finally {
    await server.close();
  }
  // Each round's own floor/SDK ratio: their spread says how far one median ratio can be trusted.
  const spread = (mode, floor = "floor") => {
    const ratios = times[floor].map((ms, i) => ms / times[mode][i]);
    return `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
  };
  return {
    ...Object.fromEntries(modes.map((mode) => [mode, median(times[mode])])),
    spread: {
      ...Object.fromEntries(sdkModes.map((mode) => [mode, spread(mode)])),
      ...(times["floor-iterate"] && {
        "floor-iterate": spread("floor-iterate"),
        "iterate-vs-iterated-floor": spread("iterate", "floor-iterate"),
      }),
    },
    importMs: median(imports),
  };
}

const rows = [];
const warmRows = [];
const importTimes = [];
const row = (engine, { sdk, iterate, floor, spread }) => ({
  engine,
  deltas: DELTAS,
  "floor ms": floor.toFixed(0),
  "result() ms": sdk.toFixed(0),
  "result() speed": (floor / sdk).toFixed(2),
  rounds: spread.sdk,
  "for await ms": iterate.toFixed(0),
  "for await speed": (floor / iterate).toFixed(2),
  "rounds ": spread.iterate,
});
/** `for await` against the floor read by `for await` too (run-one.mjs `floor-iterate`). */
const iteratedRow = (engine, { iterate, floor, "floor-iterate": floorIterate, spread }) => ({
  engine,
  "floor ms": floor.toFixed(0),
  "floor, for await ms": floorIterate.toFixed(0),
  "its speed": (floor / floorIterate).toFixed(2),
  rounds: spread["floor-iterate"],
  "Sonde for await ms": iterate.toFixed(0),
  "speed vs it": (floorIterate / iterate).toFixed(2),
  "rounds ": spread["iterate-vs-iterated-floor"],
});
const iteratedRows = [];
const warmIteratedRows = [];
for (const engine of ENGINES) {
  const fresh = await sideBySide(engine);
  importTimes.push(fresh.importMs);
  rows.push(row(engine, fresh));
  iteratedRows.push(iteratedRow(engine, fresh));
  if (WARM) {
    const warm = await sideBySide(engine, DELTAS, SDK_MODES, ["--warm"]);
    warmRows.push(row(engine, warm));
    warmIteratedRows.push(iteratedRow(engine, warm));
  }
}
console.log(
  `\nStreaming, median of ${RUNS} fresh-process runs each; speed = floor ms / SDK ms (≥ 0.90 is the target); rounds = the lowest and highest ratio of a single round (the floor and the SDK run back to back):`,
);
console.table(rows);
console.log(
  "\nThe floor read by `for await` (the same runs): each delta handed out by the thinnest async iterator, what any `for await` API pays; Sonde's `for await` against it:",
);
console.table(iteratedRows);
if (WARM) {
  console.log(
    "\nThe same, timing a second job in each process (the SDK and the floor each ran the same read once before it):",
  );
  console.table(warmRows);
  console.table(warmIteratedRows);
}

/**
 * `result()` on two transcripts in the same rounds, alternating which goes first, so that a
 * drift of the shared machine's speed hits both alike (run one after the other, a drift
 * between them moved their ratio by ±0.15).
 */
async function paired(first, second, deltas) {
  const runs = [first, second].map((engine) => ({
    engine,
    ...engines[engine].transcript(deltas),
    times: [],
  }));
  const servers = await Promise.all(runs.map((r) => serve(r.body)));
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const k of i % 2 ? [1, 0] : [0, 1]) {
        const line = await once("sdk", runs[k].engine, servers[k].url);
        if (line.chars !== runs[k].report.length)
          throw new Error(
            `sdk ${runs[k].engine}: report of ${line.chars}, expected ${runs[k].report.length}`,
          );
        runs[k].times.push(line.ms);
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
  return runs.map((r) => ({ sdk: median(r.times) }));
}

if (CITATIONS) {
  const citationDeltas = DELTAS * 2;
  const [cited, plain] = await paired("perplexity-citations", "perplexity-plain", citationDeltas);
  console.log(
    `\nPerplexity-style unpositioned citations over OpenRouter, ${citationDeltas} deltas (target ≤ 1.20×):`,
  );
  console.table([
    { transcript: "with citations", "sdk ms": cited.sdk.toFixed(0) },
    { transcript: "without", "sdk ms": plain.sdk.toFixed(0) },
    { transcript: "ratio", "sdk ms": (cited.sdk / plain.sdk).toFixed(2) },
  ]);
}
console.log(
  `\nCold import("sonde") (dist), median over ${importTimes.length * RUNS} fresh processes: ${median(importTimes).toFixed(1)} ms (target < 50)`,
);

if (MEMORY_DELTAS > 0) {
  const memory = [];
  for (const engine of ENGINES) {
    const { body } = engines[engine].transcript(MEMORY_DELTAS);
    const server = await serve(body);
    try {
      for (const mode of ["sdk", "iterate"]) {
        const line = await once(mode, engine, server.url, ["--expose-gc", "--max-old-space-size=4096"]);
        const over = (line.retainedBytes - line.reportBytes) / 2 ** 20;
        memory.push({
          engine,
          read: mode === "sdk" ? "result()" : "for await",
          deltas: MEMORY_DELTAS,
          "report MB": (line.reportBytes / 2 ** 20).toFixed(1),
          "retained MB": (line.retainedBytes / 2 ** 20).toFixed(1),
          "over report MB": over.toFixed(1),
          "≤ 20 MB": over <= 20 ? "yes" : "NO",
        });
      }
    } finally {
      await server.close();
    }
  }
  console.log("\nHeap retained after GC with the finished job and its result held:");
  console.table(memory);
}
