/**
 * Extract: asks for findings batch by batch, each with an exact quotation from its source,
 * and keeps only those whose quotation is found in the source text mechanically.
 *
 * Reads receipts: `model:extract:<batch>` (and their `#retry`).
 * Writes keys: `phase:reasoning`, `gap:extract-budget`, `gap:extract:<batch>`,
 * `gap:rejected-quotes`, `usage:extract`, `gap:no-findings`.
 */
import { pageOf, type Source } from "../corpus.js";
import { gapKey, modelCall } from "../keys.js";
import { pool } from "../operations.js";
import { extractPrompt } from "../prompts.js";
import type { Finding } from "../report.js";
import { checkQuote } from "../verify.js";
import { ask, askGap } from "./ask.js";
import { clip, type Run } from "./run.js";

/** Source text per extraction call, in characters. */
const EXTRACT_BATCH_CHARS = 20_000;
const FINDINGS_PER_BATCH = 12;
const MAX_FINDINGS = 40;

/** The findings whose quotations are exact, also left in `run.unchecked`. */
export async function extract(run: Run): Promise<Finding[]> {
  const { request, ops, budget, corpus } = run;
  await run.phase("reasoning");
  const batches = batchSources(corpus.sources);
  const calls = ops.remaining("model");
  // Keep one call for the support check and one for writing when there is room.
  const allowed = batches.slice(0, calls >= 3 ? Math.max(1, calls - 2) : Math.min(1, calls));
  if (allowed.length < batches.length) {
    const skipped = batches.slice(allowed.length).flat();
    await run.gap(gapKey.extractBudget, {
      kind: "budget-exhausted",
      detail: `${skipped.length} source(s) were read but not searched for findings (model-call budget ${budget.modelCalls}): ${skipped.map((s) => s.url).join(", ")}.`,
    });
  }
  if (!allowed.length)
    run.stop = `the model-call budget (${budget.modelCalls}) was spent before any source could be analysed`;
  const outputs = await pool(allowed, budget.parallelism, (batch, i) =>
    ask(run, "extract", modelCall.extract(i), extractPrompt(request, batch, FINDINGS_PER_BATCH)),
  );
  const proposed: Finding[] = [];
  const rejected: string[] = [];
  const seen = new Set<string>();
  for (const [i, output] of outputs.entries()) {
    if (!output.ok) {
      const what = `finding extraction (${allowed[i]!.map((s) => s.id).join(", ")})`;
      await run.gap(gapKey.extract(i), askGap(run, what, output.why, output.detail));
      continue;
    }
    for (const item of output.value.findings) {
      const source = corpus.get(item.source.trim().toUpperCase());
      if (!source || !allowed[i]!.includes(source)) {
        rejected.push(`a quotation attributed to unknown source "${clip(item.source, 20)}"`);
        continue;
      }
      const check = checkQuote(item.quote, source.text);
      if (!check.ok) {
        rejected.push(`"${clip(item.quote, 70)}" (${source.url}): ${check.reason}`);
        continue;
      }
      const dedupeKey = `${source.id}\u0000${item.quote.trim()}`;
      if (seen.has(dedupeKey) || proposed.length >= MAX_FINDINGS) continue;
      seen.add(dedupeKey);
      const page = pageOf(source, item.quote);
      proposed.push({
        id: `F${proposed.length + 1}`,
        source: source.id,
        url: source.url,
        title: source.title,
        ...(page && { page }),
        claim: item.claim.trim(),
        quote: item.quote.trim(),
      });
    }
  }
  if (rejected.length) {
    await run.gap(gapKey.rejectedQuotes, {
      kind: "missing-evidence",
      detail: `${rejected.length} proposed finding(s) were rejected because their quotation is not exact evidence from the source: ${rejected.slice(0, 5).join("; ")}${rejected.length > 5 ? "; …" : ""}.`,
    });
  }
  run.unchecked = proposed;
  await run.usage("extract");
  if (!run.stop && !proposed.length) {
    await run.gap(gapKey.noFindings, {
      kind: "missing-evidence",
      detail: "No finding with an exact supporting quotation was found in the sources.",
    });
    run.stop = "no finding could be verified against its source";
  }
  return proposed;
}

/** Groups sources into extraction calls of at most EXTRACT_BATCH_CHARS characters of text. */
function batchSources(sources: readonly Source[]): Source[][] {
  const batches: Source[][] = [];
  let current: Source[] = [];
  let size = 0;
  for (const source of sources) {
    if (current.length && size + source.text.length > EXTRACT_BATCH_CHARS) {
      batches.push(current);
      current = [];
      size = 0;
    }
    current.push(source);
    size += source.text.length;
  }
  if (current.length) batches.push(current);
  return batches;
}
