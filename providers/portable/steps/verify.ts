/**
 * Verify: every citation's quotation is checked against the stored source text again.
 * `verified` means both checks passed: the quotation is in the stored source, and the
 * support check ran and found that it supports the claim.
 *
 * Reads receipts: none (only the corpus built from `fetch:` receipts and documents).
 * Writes keys: `phase:verifying`, `citation:<final|partial>:<index>`, `gap:unverified`,
 * `gap:unchecked-citations`, `usage:final`.
 */
import { eventKey, gapKey, type Variant } from "../keys.js";
import type { Report } from "../report.js";
import { checkQuote } from "../verify.js";
import type { Run } from "./run.js";

export async function verify(run: Run, report: Report, variant: Variant): Promise<void> {
  await run.phase("verifying");
  const texts = new Map(run.corpus.sources.map((s) => [s.url, s.text]));
  const supportChecked = new Set(run.checked.map((f) => f.id));
  let unverified = 0;
  const notChecked = new Set<string>();
  for (const [i, c] of report.citations.entries()) {
    const source = texts.get(c.url);
    const quoted = source !== undefined && checkQuote(c.quote, source).ok;
    const supported = supportChecked.has(c.findingId);
    const verified = quoted && supported;
    if (!quoted) unverified++;
    else if (!supported) notChecked.add(c.findingId);
    await run.options.emit(eventKey.citation(variant, i), {
      type: "citation",
      citation: {
        url: c.url,
        ...(c.title && { title: c.title }),
        quote: c.quote,
        ...(c.page && { page: c.page }),
        startIndex: c.startIndex,
        endIndex: c.endIndex,
        verified,
      },
    });
  }
  if (unverified)
    await run.gap(gapKey.unverified, {
      kind: "missing-evidence",
      detail: `${unverified} citation(s) could not be re-verified against the stored source text.`,
    });
  if (notChecked.size) {
    const skipped = run.checkSkipped ?? {
      kind: "missing-evidence" as const,
      why: run.stop ?? "the check did not run",
    };
    await run.gap(gapKey.uncheckedCitations, {
      kind: skipped.kind,
      detail: `${notChecked.size} finding(s) quote their sources exactly but were not checked for support (${skipped.why}): their citations are marked verified: false.`,
    });
  }
  await run.usage("final");
}
