/**
 * Write: the model drafts the report from the checked findings; every derived number is
 * recomputed mechanically from its quoted inputs. Then the report — final, or partial
 * with what was found — is logged in chunks.
 *
 * Reads receipts: `model:write` (and its `#retry`).
 * Writes keys: `phase:writing`, `gap:write`, `gap:derived:<id>`, `gap:draft`,
 * `usage:write`, `text:<final|partial>:<chunk>`.
 */
import { eventKey, gapKey, modelCall, type Variant } from "../keys.js";
import { writePrompt } from "../prompts.js";
import { assembleReport, chunks, type Report, renderPartial } from "../report.js";
import { checkDerived } from "../verify.js";
import { ask, askGap } from "./ask.js";
import type { Run } from "./run.js";

/** Sets `run.report`, or `run.stop` when the draft cannot be used. */
export async function write(run: Run): Promise<void> {
  const { request, budget, checked } = run;
  await run.phase("writing");
  const draft = await ask(run, "write", modelCall.write, writePrompt(request, checked));
  if (!draft.ok) {
    await run.gap(gapKey.write, askGap(run, "report draft", draft.why, draft.detail));
    run.stop =
      draft.why === "budget"
        ? `the model-call budget (${budget.modelCalls}) was spent before the report could be written`
        : "the report draft could not be used";
    return;
  }
  const quotes = new Map(checked.map((f) => [f.id, f.quote]));
  const numbers = new Map<string, string>();
  for (const derived of draft.value.derived ?? []) {
    const id = derived.id.trim().toUpperCase();
    const result = checkDerived(derived, quotes);
    if (result.ok) numbers.set(id, display(derived.result, derived.unit));
    else
      await run.gap(gapKey.derived(id), {
        kind: "missing-evidence",
        detail: `The derived number {${id}} was rejected: ${result.reason}; its sentence was removed.`,
      });
  }
  const report = assembleReport(draft.value, request.query, new Map(checked.map((f) => [f.id, f])), numbers);
  run.report = report;
  if (report.problems.length) {
    await run.gap(gapKey.draft, {
      kind: "malformed-output",
      detail: `The draft was corrected mechanically: ${report.problems.slice(0, 5).join("; ")}${report.problems.length > 5 ? "; …" : ""}.`,
    });
  }
  await run.usage("write");
}

/** Logs the report's text: the written one, or a partial one when the run stopped. */
export async function emitReport(run: Run): Promise<{ report: Report; variant: Variant }> {
  const variant = run.stop ? "partial" : "final";
  const report =
    run.stop || !run.report
      ? renderPartial(
          run.request.query,
          run.stop ?? "the report could not be written",
          run.checked,
          run.unchecked,
        )
      : run.report;
  await run.phase("writing");
  for (const [i, delta] of chunks(report.text).entries())
    await run.options.emit(eventKey.text(variant, i), { type: "text", delta });
  return { report, variant };
}

function display(result: number | string, unit: string | null | undefined): string {
  const value = String(result).trim();
  const u = (unit ?? "").trim();
  if (!u || /^(x|times|ratio|fold)$/i.test(u)) return value;
  if (u === "%" || /^per ?cent$/i.test(u)) return `${value.replace(/%$/, "")}%`;
  return `${value} ${u}`;
}
