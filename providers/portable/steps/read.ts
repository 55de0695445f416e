/**
 * Read: puts the inline documents and then the fetched pages into the corpus; a run
 * without any readable source stops here.
 *
 * Reads receipts: `fetch:<url>`.
 * Writes keys: `gap:corpus:<url>`, `phase:reading`, `gap:fetch-budget`,
 * `open:started:<url>`, `open:done:<url>`, `gap:unreadable:<url>`, `gap:excluded:<url>`
 * (a redirect out of the allowed domains), `usage:fetch`, `gap:no-sources`.
 */
import { documentUrl, eventKey, gapKey, receiptKey } from "../keys.js";
import { pool } from "../operations.js";
import type { FetchedPage } from "../types.js";
import type { Run } from "./run.js";
import type { Candidate } from "./search.js";

/** Page text kept in a fetch receipt; the corpus keeps at most 60,000 bytes overall. */
const MAX_RECEIPT_TEXT = 200_000;

/** Inline documents: evidence without any call. */
export async function readDocuments(run: Run): Promise<void> {
  for (const [i, doc] of (run.request.sources?.documents ?? []).entries()) {
    await run.addToCorpus(doc.url ?? documentUrl(doc.id ?? i + 1), doc.title ?? doc.id, doc.text);
  }
}

export async function read(run: Run, candidates: Candidate[]): Promise<void> {
  if (candidates.length) await fetchAll(run, candidates);
  if (!run.stop && !run.corpus.sources.length) {
    await run.gap(gapKey.noSources, {
      kind: "missing-evidence",
      detail: run.web
        ? "No source could be found and read for this question."
        : "No source could be read: give sources.documents or sources.urls, or allow web search.",
    });
    run.stop = "no source could be read";
  }
}

async function fetchAll(run: Run, candidates: Candidate[]): Promise<void> {
  const { ops, budget, filter, options } = run;
  await run.phase("reading");
  const toFetch = candidates.slice(0, ops.remaining("fetch"));
  const unread = candidates.slice(toFetch.length).filter((c) => c.explicit);
  if (unread.length) {
    await run.gap(gapKey.fetchBudget, {
      kind: "budget-exhausted",
      detail: `${unread.length} requested URL(s) were not read (fetch budget ${budget.fetches}): ${unread.map((c) => c.url).join(", ")}.`,
    });
  }
  for (const c of toFetch)
    await options.emit(eventKey.openStarted(c.url), {
      type: "search",
      action: "open_page",
      url: c.url,
      state: "started",
    });
  const pages = await pool(toFetch, budget.parallelism, (c) =>
    ops.run<FetchedPage>("fetch", receiptKey.fetch(c.url), (signal) => fetchPage(run, c.url, signal)),
  );
  for (const [i, c] of toFetch.entries()) {
    const outcome = pages[i]!;
    const readable = outcome.ok && outcome.value.text.trim().length > 0;
    await options.emit(eventKey.openDone(c.url), {
      type: "search",
      action: "open_page",
      url: c.url,
      state: readable ? "completed" : "failed",
    });
    if (!outcome.ok) {
      await run.gap(gapKey.unreadable(c.url), {
        kind: "unreadable-source",
        detail: `${c.url} could not be read: ${outcome.error.message}.`,
        source: c.url,
      });
      continue;
    }
    const page = outcome.value;
    if (!readable) {
      await run.gap(gapKey.unreadable(c.url), {
        kind: "unreadable-source",
        detail: `${c.url} has no readable text.`,
        source: c.url,
      });
      continue;
    }
    // A redirect may land outside the allowed domains.
    const excluded = page.url !== c.url ? filter.excluded(page.url) : undefined;
    if (excluded) {
      await run.gap(gapKey.excluded(page.url), {
        kind: "missing-evidence",
        detail: `${c.url} redirected to ${page.url}, which was not used: ${excluded}.`,
        source: page.url,
      });
      continue;
    }
    if (page.extraction === "whole-page")
      options.logger.debug("portable: no main article found; the whole page's text is kept", {
        url: page.url,
      });
    const { url: _url, text: _text, contentType: _type, title: _title, ...meta } = page;
    await run.addToCorpus(page.url, page.title ?? c.title, page.text, meta);
  }
  await run.usage("fetch");
}

/** One fetch, reduced to what its receipt keeps (a user's fetcher may return anything). */
async function fetchPage(run: Run, url: string, signal: AbortSignal): Promise<FetchedPage> {
  const page = await run.options.fetcher.fetch(url, { signal });
  const text = String(page.text ?? "").slice(0, MAX_RECEIPT_TEXT);
  const str = (value: unknown) => (typeof value === "string" && value ? value : undefined);
  return {
    url: str(page.url) ?? url,
    text,
    contentType: String(page.contentType ?? ""),
    ...(page.title && { title: String(page.title) }),
    ...(str(page.extraction) && { extraction: page.extraction }),
    ...(str(page.byline) && { byline: page.byline }),
    ...(str(page.publishedAt) && { publishedAt: page.publishedAt }),
    ...(str(page.canonicalUrl) && { canonicalUrl: page.canonicalUrl }),
    ...(str(page.encoding) && { encoding: page.encoding }),
    ...(Array.isArray(page.pageStarts) && {
      pageStarts: page.pageStarts.filter((n, i) => Number.isInteger(n) && (i === 0 || n < text.length)),
    }),
  };
}
