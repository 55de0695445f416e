/**
 * Search: collects the URLs to read — the request's own URLs first, then the results of
 * the planned queries, round-robin so that every query's best results come first.
 *
 * Reads receipts: `search:<query>`.
 * Writes keys: `gap:read-budget`, `gap:excluded:<url>`, `phase:searching`,
 * `gap:search-budget`, `search:started:<query>`, `search:done:<query>`,
 * `gap:search-failed:<query>`, `usage:search`.
 */
import { normalizeUrl } from "../../../src/aggregate.js";
import { eventKey, gapKey, receiptKey } from "../keys.js";
import { pool } from "../operations.js";
import type { SearchResult } from "../types.js";
import { clip, type Run } from "./run.js";

export interface Candidate {
  url: string;
  title?: string | undefined;
  /** Named in the request's `sources.urls`, not found by a search. */
  explicit: boolean;
}

export async function search(run: Run, planned: string[]): Promise<Candidate[]> {
  const { request, ops, budget, filter, options } = run;
  let queries = planned;
  if (ops.remaining("model") < 1) {
    // Nothing could analyse what searches and fetches would bring: do not pay for them.
    await run.gap(gapKey.readBudget, {
      kind: "budget-exhausted",
      detail: `Sources were not searched or read: the model-call budget (${budget.modelCalls}) is spent.`,
    });
    run.stop = `the model-call budget (${budget.modelCalls}) was spent before any source could be analysed`;
    queries = [];
  }
  const candidates: Candidate[] = [];
  const known = new Set<string>();
  for (const url of run.stop ? [] : (request.sources?.urls ?? [])) {
    const excluded = filter.excluded(url);
    if (excluded) {
      await run.gap(gapKey.excluded(url), {
        kind: "missing-evidence",
        detail: `${url} was not read: ${excluded}.`,
        source: url,
      });
      continue;
    }
    if (known.has(normalizeUrl(url))) continue;
    known.add(normalizeUrl(url));
    candidates.push({ url, explicit: true });
  }
  const backend = options.search;
  if (!queries.length || !backend) return candidates;

  await run.phase("searching");
  const allowed = queries.slice(0, ops.remaining("search"));
  if (allowed.length < queries.length) {
    const skipped = queries.slice(allowed.length);
    await run.gap(gapKey.searchBudget, {
      kind: "budget-exhausted",
      detail: `${skipped.length} planned search(es) were not run (search budget ${budget.searches}): ${skipped.map((q) => `"${clip(q, 60)}"`).join(", ")}.`,
    });
  }
  for (const query of allowed)
    await options.emit(eventKey.searchStarted(query), {
      type: "search",
      action: "search",
      query,
      state: "started",
    });
  const outcomes = await pool(allowed, budget.parallelism, (query) =>
    ops.run<SearchResult[]>("search", receiptKey.search(query), async (signal) =>
      (await backend.search(query, { signal })).slice(0, 20).map((r) => ({
        url: r.url,
        ...(r.title && { title: r.title }),
        ...(r.snippet && { snippet: r.snippet.slice(0, 500) }),
      })),
    ),
  );
  const ranked: SearchResult[][] = [];
  for (const [i, query] of allowed.entries()) {
    const outcome = outcomes[i]!;
    await options.emit(eventKey.searchDone(query), {
      type: "search",
      action: "search",
      query,
      state: outcome.ok ? "completed" : "failed",
    });
    if (!outcome.ok) {
      await run.gap(gapKey.searchFailed(query), {
        kind: "missing-evidence",
        detail: `The search "${clip(query, 60)}" failed: ${outcome.error.message}.`,
      });
      continue;
    }
    ranked.push(outcome.value.filter((r) => isHttp(r.url) && !filter.excluded(r.url)));
  }
  for (let rank = 0; ranked.some((list) => rank < list.length); rank++) {
    for (const list of ranked) {
      const result = list[rank];
      if (!result || known.has(normalizeUrl(result.url))) continue;
      known.add(normalizeUrl(result.url));
      candidates.push({ url: result.url, title: result.title, explicit: false });
    }
  }
  await run.usage("search");
  return candidates;
}

const isHttp = (url: string) => /^https?:\/\//i.test(url);
