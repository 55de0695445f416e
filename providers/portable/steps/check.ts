/**
 * Check: a separate model call judges whether each quotation supports its claim; only
 * supported findings go on, renumbered F1…Fn for the writer.
 *
 * Reads receipts: `model:check` (and its `#retry`).
 * Writes keys: `gap:check`, `gap:verdict:<finding>`, `gap:check-missing`, `usage:check`.
 */
import { gapKey, modelCall } from "../keys.js";
import { checkPrompt } from "../prompts.js";
import type { Finding } from "../report.js";
import { ask, askGap } from "./ask.js";
import { clip, type Run } from "./run.js";

/** Sets `run.checked` (and clears `run.unchecked`), or `run.stop` when the check cannot run. */
export async function check(run: Run, proposed: Finding[]): Promise<void> {
  const { request, budget } = run;
  const verdicts = await ask(run, "check", modelCall.check, checkPrompt(request, proposed));
  if (!verdicts.ok) {
    const skipped = askGap(run, "support check", verdicts.why, verdicts.detail);
    await run.gap(gapKey.check, skipped);
    run.stop =
      verdicts.why === "budget"
        ? `the model-call budget (${budget.modelCalls}) was spent before the findings were checked for support`
        : "the findings could not be checked for support";
    run.checkSkipped = { kind: skipped.kind, why: run.stop };
    return;
  }
  const byId = new Map(verdicts.value.checks.map((c) => [c.id.trim().toUpperCase(), c]));
  const supported: Finding[] = [];
  const notChecked: Finding[] = [];
  for (const finding of proposed) {
    const verdict = byId.get(finding.id);
    if (!verdict) notChecked.push(finding);
    else if (verdict.verdict === "supported") supported.push(finding);
    else {
      await run.gap(gapKey.verdict(finding.id), {
        kind: "missing-evidence",
        detail: `Dropped the claim "${clip(finding.claim, 100)}": the check found its quotation ${verdict.verdict === "contradicted" ? "contradicts" : "does not support"} it${verdict.reason ? ` (${clip(verdict.reason, 120)})` : ""}.`,
        source: finding.url,
      });
    }
  }
  if (notChecked.length) {
    await run.gap(gapKey.checkMissing, {
      kind: "malformed-output",
      detail: `The support check gave no verdict for ${notChecked.map((f) => f.id).join(", ")}; those findings were left out.`,
    });
  }
  // Renumber the survivors so that the writer sees F1…Fn.
  run.checked = supported.map((f, i) => ({ ...f, id: `F${i + 1}` }));
  run.unchecked = [];
  await run.usage("check");
  if (!run.checked.length) run.stop = "no finding survived the support check";
}
