/**
 * Plan: turns the question into web search queries (only when the web is searched).
 *
 * Reads receipts: `model:plan` (and its `#retry`).
 * Writes keys: `phase:planning`, `gap:search-budget-zero`, `gap:plan-budget`, `gap:plan`,
 * `usage:plan`.
 */
import { gapKey, modelCall } from "../keys.js";
import { planPrompt } from "../prompts.js";
import { ask, askGap } from "./ask.js";
import type { Run } from "./run.js";

/** The queries to search; none when the web is not searched. */
export async function plan(run: Run): Promise<string[]> {
  const { request, budget, ops } = run;
  if (!run.web) return [];
  let queries: string[] = [];
  await run.phase("planning");
  if (budget.searches === 0) {
    await run.gap(gapKey.searchBudgetZero, {
      kind: "budget-exhausted",
      detail: "Web search was skipped: the search budget is 0.",
    });
  } else if (ops.remaining("model") < 2) {
    // Planning would leave no call to read what the searches find.
    await run.gap(gapKey.planBudget, {
      kind: "budget-exhausted",
      detail: `The research plan was skipped to keep the model-call budget (${budget.modelCalls}) for reading; the question was searched as written.`,
    });
    queries = [request.query];
  } else {
    const planned = await ask(run, "plan", modelCall.plan, planPrompt(request, budget.searches));
    if (planned.ok) queries = dedupe(planned.value.queries.map((q) => q.trim()));
    else {
      const missing = askGap(run, "research plan", planned.why, planned.detail);
      await run.gap(gapKey.plan, {
        ...missing,
        detail: `${missing.detail} The question was searched as written.`,
      });
      queries = [request.query];
    }
  }
  await run.usage("plan");
  return queries;
}

function dedupe(queries: string[]): string[] {
  const seen = new Set<string>();
  return queries.filter((q) => {
    const key = q.toLowerCase();
    if (!q || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
