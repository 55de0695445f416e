/**
 * The research loop: plan → search → read → extract findings (exact quotations, checked
 * mechanically) → support check (a separate model call) → write (derived numbers checked
 * mechanically) → verify. Each step lives in steps/, its header naming the receipts it
 * reads and the keys it writes (all templates are in keys.ts). The loop is a
 * deterministic function of the request and the receipts, so a re-run after a restart
 * replays completed calls from their receipts and re-emits the same keyed events (the
 * runner appends only keys it has not logged). Missing evidence, malformed output,
 * unreadable sources, spent budgets and the deadline all end in a report, partial if need
 * be, with gaps; only fatal configuration errors throw.
 */
import { gapKey } from "./keys.js";
import { DeadlineReached } from "./operations.js";
import { check } from "./steps/check.js";
import { extract } from "./steps/extract.js";
import { plan } from "./steps/plan.js";
import { read, readDocuments } from "./steps/read.js";
import { type LoopOptions, startRun } from "./steps/run.js";
import { search } from "./steps/search.js";
import { verify } from "./steps/verify.js";
import { emitReport, write } from "./steps/write.js";

export type LoopEnd = "completed" | "incomplete";

export async function runLoop(options: LoopOptions): Promise<LoopEnd> {
  const run = startRun(options);
  try {
    await readDocuments(run);
    const queries = await plan(run);
    const candidates = await search(run, queries);
    await read(run, candidates);
    if (!run.stop) {
      const proposed = await extract(run);
      if (!run.stop) await check(run, proposed);
    }
    if (!run.stop) await write(run);
  } catch (error) {
    if (!(error instanceof DeadlineReached)) throw error;
    const seconds = Math.round(run.budget.deadlineMs / 1000);
    await run.gap(gapKey.deadline, {
      kind: "deadline",
      detail: `The deadline (${seconds} s from the start of execution) passed; no new call was made after it.`,
    });
    run.stop = `its deadline of ${seconds} s passed`;
    run.checkSkipped ??= { kind: "deadline", why: run.stop };
  }
  const { report, variant } = await emitReport(run);
  await verify(run, report, variant);
  return run.stop ? "incomplete" : "completed";
}
