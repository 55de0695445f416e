/**
 * Cold import bench (`npm run bench`, or `node test/bench/cold-import.mjs` after a build):
 * each run is a fresh Node process that times one dynamic `import()` of dist. The machine is
 * shared, so every round runs `sonde`, `sonde/core` + one engine, and zod (the peer every
 * Sonde app loads anyway, a fixed yardstick) back to back, rotating which goes first; it
 * prints medians and each one's ratio to zod's median in the same run. "after zod" rows time
 * the same import in a process that has already imported zod (untimed): Sonde's own share.
 *
 * Env: BENCH_IMPORT_RUNS (15); BENCH_IMPORT_BEFORE, the root of another build of Sonde (an
 * older commit's, built) to time alongside in the same rounds. An entry that build does not
 * have (`sonde/core` came later) is left out, and the last line gives this build's import
 * against that one's: a ratio from one run, which a figure measured on another day and host
 * is not (see RESULTS.md, "Session 9", for the baseline build).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 15);
const before = process.env.BENCH_IMPORT_BEFORE;

const targets = {
  'import("sonde")': [`${root}dist/index.js`],
  "sonde/core + openai": [`${root}dist/core.js`, `${root}dist/providers/openai.js`],
  'import("zod")': ["zod"],
  "sonde after zod": { preload: "zod", specifiers: [`${root}dist/index.js`] },
  ...(before && {
    'before: import("sonde")': [`${before}/dist/index.js`],
    ...(existsSync(`${before}/dist/core.js`) && {
      "before: sonde/core + openai": [`${before}/dist/core.js`, `${before}/dist/providers/openai.js`],
    }),
    // Run from that build's root, so "zod" is the copy it resolves (its own node_modules, if it has one).
    "before: sonde after zod": { preload: "zod", specifiers: [`${before}/dist/index.js`], cwd: before },
  }),
};

/** Times the imports in a fresh process, from the first `import()` to the last one settled. */
async function once(target) {
  const { preload, specifiers, cwd = root } = Array.isArray(target) ? { specifiers: target } : target;
  const warm = preload ? `await import(${JSON.stringify(preload)}); ` : "";
  const script = `${warm}const t = performance.now(); for (const s of ${JSON.stringify(specifiers)}) await import(s); console.log(performance.now() - t);`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd });
  return Number(stdout.trim());
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const names = Object.keys(targets);
const times = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < RUNS; round++) {
  // Rotate the order so drift on a shared machine falls on every target alike.
  for (let i = 0; i < names.length; i++) {
    const name = names[(round + i) % names.length];
    times[name].push(await once(targets[name]));
  }
}
const zod = median(times['import("zod")']);
console.log(`\nCold import, median of ${RUNS} fresh processes each (target: import("sonde") < 50 ms):`);
console.table(
  names.map((name) => ({
    import: name,
    "median ms": median(times[name]).toFixed(1),
    "min ms": Math.min(...times[name]).toFixed(1),
    "× zod": (median(times[name]) / zod).toFixed(2),
  })),
);
if (before) {
  const ratio = median(times['import("sonde")']) / median(times['before: import("sonde")']);
  console.log(
    `import("sonde") takes ${ratio.toFixed(2)}× the time of the build at ${before}, in the same rounds.`,
  );
}
