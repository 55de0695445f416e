/**
 * The research loop: plan → search → read → extract findings (exact quotations, checked
 * mechanically) → support check (a separate model call) → write (derived numbers checked
 * mechanically) → verify. It is a deterministic function of the request and the receipts,
 * so a re-run after a restart replays completed calls from their receipts and re-emits
 * the same keyed events (the runner appends only keys it has not logged). Missing
 * evidence, malformed output, unreadable sources, spent budgets and the deadline all end
 * in a report, partial if need be, with gaps; only fatal configuration errors throw.
 */
import { normalizeUrl } from "../../src/aggregate.js";
import type { Logger } from "../../src/provider.js";
import { CORPUS_CAP_BYTES, Corpus, pageOf, type Source, type SourceMeta } from "./corpus.js";
import { domainFilter } from "./domains.js";
import { type Budget, DeadlineReached, type Operations, pool } from "./operations.js";
import {
  checkPrompt,
  extractPrompt,
  parseOutput,
  planPrompt,
  retryMessages,
  type Task,
  type TaskOutput,
  writePrompt,
} from "./prompts.js";
import { assembleReport, chunks, type Finding, type Report, renderPartial } from "./report.js";
import type {
  ChatMessage,
  ChatModel,
  ChatResponse,
  FetchedPage,
  Fetcher,
  SearchBackend,
  SearchResult,
  StoredRequest,
} from "./types.js";
import { checkDerived, checkQuote } from "./verify.js";
import type { WireData } from "./wire.js";

/** Output-token cap of every model response (DESIGN §10). */
export const MAX_OUTPUT_TOKENS = 4_096;
/** Source text per extraction call, in characters. */
const EXTRACT_BATCH_CHARS = 20_000;
const FINDINGS_PER_BATCH = 12;
const MAX_FINDINGS = 40;
/** Page text kept in a fetch receipt; the corpus keeps at most 60,000 bytes overall. */
const MAX_RECEIPT_TEXT = 200_000;

export interface LoopOptions {
  request: StoredRequest;
  /** The chat endpoint's model name. */
  chatModel: string;
  chat: ChatModel;
  search: SearchBackend | undefined;
  fetcher: Fetcher;
  ops: Operations;
  budget: Budget;
  logger: Logger;
  /** Appends a keyed wire event unless that key was logged before. */
  emit(key: string, data: WireData): Promise<void>;
}

type Gap = Extract<WireData, { type: "gap" }>["gap"];

export type LoopEnd = "completed" | "incomplete";

const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export async function runLoop(options: LoopOptions): Promise<LoopEnd> {
  const { request, ops, budget, emit } = options;
  const documents = request.sources?.documents ?? [];
  const web = request.sources?.web ?? documents.length === 0;
  const filter = domainFilter(request.sources?.allowDomains, request.sources?.denyDomains);
  const corpus = new Corpus();

  const phase = (name: Extract<WireData, { type: "phase" }>["phase"]) =>
    emit(`phase:${name}`, { type: "phase", phase: name });
  const gap = (key: string, value: Gap) => emit(`gap:${key}`, { type: "gap", gap: value });
  const usage = (label: string) => emit(`usage:${label}`, { type: "usage", usage: ops.usage() });

  /** One model call, parsed; a malformed answer is retried once if the budget allows. */
  const ask = async <T extends Task>(
    task: T,
    key: string,
    messages: ChatMessage[],
  ): Promise<
    { ok: true; value: TaskOutput<T> } | { ok: false; why: "budget" | "malformed" | "failed"; detail: string }
  > => {
    const call = (msgs: ChatMessage[]) => (signal: AbortSignal) =>
      options.chat.complete({
        model: options.chatModel,
        messages: msgs,
        maxTokens: MAX_OUTPUT_TOKENS,
        signal,
      });
    if (ops.remaining("model") < 1) return { ok: false, why: "budget", detail: "no model calls left" };
    const first = await ops.run<ChatResponse>("model", `model:${key}`, call(messages));
    if (!first.ok) return { ok: false, why: "failed", detail: first.error.message };
    const parsed = parseOutput(task, first.value.content);
    if (parsed.ok) return parsed;
    const problem =
      first.value.finishReason === "length"
        ? `${parsed.problem}; the reply hit the ${MAX_OUTPUT_TOKENS}-token cap`
        : parsed.problem;
    if (ops.remaining("model") < 1)
      return { ok: false, why: "malformed", detail: `${problem} (no model call left to retry)` };
    const second = await ops.run<ChatResponse>(
      "model",
      `model:${key}#retry`,
      call(retryMessages(messages, first.value.content, problem)),
    );
    if (!second.ok) return { ok: false, why: "failed", detail: second.error.message };
    const reparsed = parseOutput(task, second.value.content);
    return reparsed.ok
      ? reparsed
      : { ok: false, why: "malformed", detail: `${reparsed.problem} (after one retry)` };
  };
  const askGap = (what: string, why: "budget" | "malformed" | "failed", detail: string): Gap => ({
    kind: why === "budget" ? "budget-exhausted" : why === "malformed" ? "malformed-output" : "interrupted",
    detail:
      why === "budget"
        ? `The ${what} was skipped: the model-call budget (${budget.modelCalls}) is spent.`
        : why === "malformed"
          ? `The model's ${what} could not be used: ${detail}.`
          : `The ${what} call failed: ${detail}.`,
  });

  let stop: string | undefined;
  let checked: Finding[] = [];
  let unchecked: Finding[] = [];
  /** Why the support check did not run, when findings were quoted but not checked. */
  let checkSkipped: { kind: Gap["kind"]; why: string } | undefined;
  let report: Report | undefined;

  try {
    // --- Inline documents: evidence without any call ---
    for (const [i, doc] of documents.entries()) {
      await addToCorpus(doc.url ?? `document:${doc.id ?? i + 1}`, doc.title ?? doc.id, doc.text);
    }

    // --- Planning ---
    let queries: string[] = [];
    if (web) {
      await phase("planning");
      if (budget.searches === 0) {
        await gap("search-budget-zero", {
          kind: "budget-exhausted",
          detail: "Web search was skipped: the search budget is 0.",
        });
      } else if (ops.remaining("model") < 2) {
        // Planning would leave no call to read what the searches find.
        await gap("plan-budget", {
          kind: "budget-exhausted",
          detail: `The research plan was skipped to keep the model-call budget (${budget.modelCalls}) for reading; the question was searched as written.`,
        });
        queries = [request.query];
      } else {
        const plan = await ask("plan", "plan", planPrompt(request, budget.searches));
        if (plan.ok) queries = dedupe(plan.value.queries.map((q) => q.trim()));
        else {
          const missing = askGap("research plan", plan.why, plan.detail);
          await gap("plan", {
            ...missing,
            detail: `${missing.detail} The question was searched as written.`,
          });
          queries = [request.query];
        }
      }
      await usage("plan");
    }

    // --- Searching ---
    if (ops.remaining("model") < 1) {
      // Nothing could analyse what searches and fetches would bring: do not pay for them.
      await gap("read-budget", {
        kind: "budget-exhausted",
        detail: `Sources were not searched or read: the model-call budget (${budget.modelCalls}) is spent.`,
      });
      stop = `the model-call budget (${budget.modelCalls}) was spent before any source could be analysed`;
      queries = [];
    }
    const candidates: { url: string; title?: string | undefined; explicit: boolean }[] = [];
    const known = new Set<string>();
    for (const url of stop ? [] : (request.sources?.urls ?? [])) {
      const excluded = filter.excluded(url);
      if (excluded) {
        await gap(`excluded:${url}`, {
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
    if (queries.length && options.search) {
      await phase("searching");
      const allowed = queries.slice(0, ops.remaining("search"));
      if (allowed.length < queries.length) {
        const skipped = queries.slice(allowed.length);
        await gap("search-budget", {
          kind: "budget-exhausted",
          detail: `${skipped.length} planned search(es) were not run (search budget ${budget.searches}): ${skipped.map((q) => `"${clip(q, 60)}"`).join(", ")}.`,
        });
      }
      for (const query of allowed)
        await emit(`search:started:${query}`, { type: "search", action: "search", query, state: "started" });
      const search = options.search;
      const outcomes = await pool(allowed, budget.parallelism, (query) =>
        ops.run<SearchResult[]>("search", `search:${query}`, async (signal) =>
          (await search.search(query, { signal })).slice(0, 20).map((r) => ({
            url: r.url,
            ...(r.title && { title: r.title }),
            ...(r.snippet && { snippet: r.snippet.slice(0, 500) }),
          })),
        ),
      );
      const ranked: SearchResult[][] = [];
      for (const [i, query] of allowed.entries()) {
        const outcome = outcomes[i]!;
        await emit(`search:done:${query}`, {
          type: "search",
          action: "search",
          query,
          state: outcome.ok ? "completed" : "failed",
        });
        if (!outcome.ok) {
          await gap(`search-failed:${query}`, {
            kind: "missing-evidence",
            detail: `The search "${clip(query, 60)}" failed: ${outcome.error.message}.`,
          });
          continue;
        }
        ranked.push(outcome.value.filter((r) => isHttp(r.url) && !filter.excluded(r.url)));
      }
      // Round-robin over queries, so every query's best results come first.
      for (let rank = 0; ranked.some((list) => rank < list.length); rank++) {
        for (const list of ranked) {
          const result = list[rank];
          if (!result || known.has(normalizeUrl(result.url))) continue;
          known.add(normalizeUrl(result.url));
          candidates.push({ url: result.url, title: result.title, explicit: false });
        }
      }
      await usage("search");
    }

    // --- Reading ---
    if (candidates.length) {
      await phase("reading");
      const toFetch = candidates.slice(0, ops.remaining("fetch"));
      const unread = candidates.slice(toFetch.length).filter((c) => c.explicit);
      if (unread.length) {
        await gap("fetch-budget", {
          kind: "budget-exhausted",
          detail: `${unread.length} requested URL(s) were not read (fetch budget ${budget.fetches}): ${unread.map((c) => c.url).join(", ")}.`,
        });
      }
      for (const c of toFetch)
        await emit(`open:started:${c.url}`, {
          type: "search",
          action: "open_page",
          url: c.url,
          state: "started",
        });
      const fetcher = options.fetcher;
      const pages = await pool(toFetch, budget.parallelism, (c) =>
        ops.run<FetchedPage>("fetch", `fetch:${c.url}`, async (signal) => {
          const page = await fetcher.fetch(c.url, { signal });
          const text = String(page.text ?? "").slice(0, MAX_RECEIPT_TEXT);
          const str = (value: unknown) => (typeof value === "string" && value ? value : undefined);
          return {
            url: str(page.url) ?? c.url,
            text,
            contentType: String(page.contentType ?? ""),
            ...(page.title && { title: String(page.title) }),
            ...(str(page.extraction) && { extraction: page.extraction }),
            ...(str(page.byline) && { byline: page.byline }),
            ...(str(page.publishedAt) && { publishedAt: page.publishedAt }),
            ...(str(page.canonicalUrl) && { canonicalUrl: page.canonicalUrl }),
            ...(str(page.encoding) && { encoding: page.encoding }),
            ...(Array.isArray(page.pageStarts) && {
              pageStarts: page.pageStarts.filter(
                (n, i) => Number.isInteger(n) && (i === 0 || n < text.length),
              ),
            }),
          };
        }),
      );
      for (const [i, c] of toFetch.entries()) {
        const outcome = pages[i]!;
        const readable = outcome.ok && outcome.value.text.trim().length > 0;
        await emit(`open:done:${c.url}`, {
          type: "search",
          action: "open_page",
          url: c.url,
          state: readable ? "completed" : "failed",
        });
        if (!outcome.ok) {
          await gap(`unreadable:${c.url}`, {
            kind: "unreadable-source",
            detail: `${c.url} could not be read: ${outcome.error.message}.`,
            source: c.url,
          });
          continue;
        }
        const page = outcome.value;
        if (!readable) {
          await gap(`unreadable:${c.url}`, {
            kind: "unreadable-source",
            detail: `${c.url} has no readable text.`,
            source: c.url,
          });
          continue;
        }
        // A redirect may land outside the allowed domains.
        const excluded = page.url !== c.url ? filter.excluded(page.url) : undefined;
        if (excluded) {
          await gap(`excluded:${page.url}`, {
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
        await addToCorpus(page.url, page.title ?? c.title, page.text, meta);
      }
      await usage("fetch");
    }

    if (!stop && !corpus.sources.length) {
      await gap("no-sources", {
        kind: "missing-evidence",
        detail: web
          ? "No source could be found and read for this question."
          : "No source could be read: give sources.documents or sources.urls, or allow web search.",
      });
      stop = "no source could be read";
    }

    // --- Reasoning: findings with exact quotations, then a support check ---
    if (!stop) {
      await phase("reasoning");
      const batches = batchSources(corpus.sources);
      const calls = ops.remaining("model");
      // Keep one call for the support check and one for writing when there is room.
      const allowed = batches.slice(0, calls >= 3 ? Math.max(1, calls - 2) : Math.min(1, calls));
      if (allowed.length < batches.length) {
        const skipped = batches.slice(allowed.length).flat();
        await gap("extract-budget", {
          kind: "budget-exhausted",
          detail: `${skipped.length} source(s) were read but not searched for findings (model-call budget ${budget.modelCalls}): ${skipped.map((s) => s.url).join(", ")}.`,
        });
      }
      if (!allowed.length)
        stop = `the model-call budget (${budget.modelCalls}) was spent before any source could be analysed`;
      const outputs = await pool(allowed, budget.parallelism, (batch, i) =>
        ask("extract", `extract:${i}`, extractPrompt(request, batch, FINDINGS_PER_BATCH)),
      );
      const proposed: Finding[] = [];
      const rejected: string[] = [];
      const seen = new Set<string>();
      for (const [i, output] of outputs.entries()) {
        if (!output.ok) {
          await gap(
            `extract:${i}`,
            askGap(
              `finding extraction (${allowed[i]!.map((s) => s.id).join(", ")})`,
              output.why,
              output.detail,
            ),
          );
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
        await gap("rejected-quotes", {
          kind: "missing-evidence",
          detail: `${rejected.length} proposed finding(s) were rejected because their quotation is not exact evidence from the source: ${rejected.slice(0, 5).join("; ")}${rejected.length > 5 ? "; …" : ""}.`,
        });
      }
      unchecked = proposed;
      await usage("extract");
      if (!stop && !proposed.length) {
        await gap("no-findings", {
          kind: "missing-evidence",
          detail: "No finding with an exact supporting quotation was found in the sources.",
        });
        stop = "no finding could be verified against its source";
      }

      if (!stop) {
        const verdicts = await ask("check", "check", checkPrompt(request, proposed));
        if (!verdicts.ok) {
          const skipped = askGap("support check", verdicts.why, verdicts.detail);
          await gap("check", skipped);
          stop =
            verdicts.why === "budget"
              ? `the model-call budget (${budget.modelCalls}) was spent before the findings were checked for support`
              : "the findings could not be checked for support";
          checkSkipped = { kind: skipped.kind, why: stop };
        } else {
          const byId = new Map(verdicts.value.checks.map((c) => [c.id.trim().toUpperCase(), c]));
          const supported: Finding[] = [];
          const notChecked: Finding[] = [];
          for (const finding of proposed) {
            const verdict = byId.get(finding.id);
            if (!verdict) notChecked.push(finding);
            else if (verdict.verdict === "supported") supported.push(finding);
            else {
              await gap(`verdict:${finding.id}`, {
                kind: "missing-evidence",
                detail: `Dropped the claim "${clip(finding.claim, 100)}": the check found its quotation ${verdict.verdict === "contradicted" ? "contradicts" : "does not support"} it${verdict.reason ? ` (${clip(verdict.reason, 120)})` : ""}.`,
                source: finding.url,
              });
            }
          }
          if (notChecked.length) {
            await gap("check-missing", {
              kind: "malformed-output",
              detail: `The support check gave no verdict for ${notChecked.map((f) => f.id).join(", ")}; those findings were left out.`,
            });
          }
          // Renumber the survivors so that the writer sees F1…Fn.
          checked = supported.map((f, i) => ({ ...f, id: `F${i + 1}` }));
          unchecked = [];
          await usage("check");
          if (!checked.length) stop = "no finding survived the support check";
        }
      }
    }

    // --- Writing ---
    if (!stop) {
      await phase("writing");
      const draft = await ask("write", "write", writePrompt(request, checked));
      if (!draft.ok) {
        await gap("write", askGap("report draft", draft.why, draft.detail));
        stop =
          draft.why === "budget"
            ? `the model-call budget (${budget.modelCalls}) was spent before the report could be written`
            : "the report draft could not be used";
      } else {
        const quotes = new Map(checked.map((f) => [f.id, f.quote]));
        const numbers = new Map<string, string>();
        for (const derived of draft.value.derived ?? []) {
          const id = derived.id.trim().toUpperCase();
          const result = checkDerived(derived, quotes);
          if (result.ok) numbers.set(id, display(derived.result, derived.unit));
          else
            await gap(`derived:${id}`, {
              kind: "missing-evidence",
              detail: `The derived number {${id}} was rejected: ${result.reason}; its sentence was removed.`,
            });
        }
        report = assembleReport(draft.value, request.query, new Map(checked.map((f) => [f.id, f])), numbers);
        if (report.problems.length) {
          await gap("draft", {
            kind: "malformed-output",
            detail: `The draft was corrected mechanically: ${report.problems.slice(0, 5).join("; ")}${report.problems.length > 5 ? "; …" : ""}.`,
          });
        }
        await usage("write");
      }
    }
  } catch (error) {
    if (!(error instanceof DeadlineReached)) throw error;
    await gap("deadline", {
      kind: "deadline",
      detail: `The deadline (${Math.round(budget.deadlineMs / 1000)} s from the start of execution) passed; no new call was made after it.`,
    });
    stop = `its deadline of ${Math.round(budget.deadlineMs / 1000)} s passed`;
    checkSkipped ??= { kind: "deadline", why: stop };
  }

  const variant = stop ? "partial" : "final";
  if (stop || !report)
    report = renderPartial(request.query, stop ?? "the report could not be written", checked, unchecked);
  await phase("writing");
  for (const [i, delta] of chunks(report.text).entries())
    await emit(`text:${variant}:${i}`, { type: "text", delta });

  // --- Verifying: every citation's quotation against the stored source text, again ---
  await phase("verifying");
  const texts = new Map(corpus.sources.map((s) => [s.url, s.text]));
  // `verified` means both checks passed: the quotation is in the stored source, and the
  // support check ran and found that it supports the claim.
  const supportChecked = new Set(checked.map((f) => f.id));
  let unverified = 0;
  const notChecked = new Set<string>();
  for (const [i, c] of report.citations.entries()) {
    const source = texts.get(c.url);
    const quoted = source !== undefined && checkQuote(c.quote, source).ok;
    const supported = supportChecked.has(c.findingId);
    const verified = quoted && supported;
    if (!quoted) unverified++;
    else if (!supported) notChecked.add(c.findingId);
    await emit(`citation:${variant}:${i}`, {
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
    await gap("unverified", {
      kind: "missing-evidence",
      detail: `${unverified} citation(s) could not be re-verified against the stored source text.`,
    });
  if (notChecked.size) {
    const skipped = checkSkipped ?? {
      kind: "missing-evidence" as const,
      why: stop ?? "the check did not run",
    };
    await gap("unchecked-citations", {
      kind: skipped.kind,
      detail: `${notChecked.size} finding(s) quote their sources exactly but were not checked for support (${skipped.why}): their citations are marked verified: false.`,
    });
  }
  await usage("final");
  return stop ? "incomplete" : "completed";

  async function addToCorpus(
    url: string,
    title: string | undefined,
    text: string,
    meta?: SourceMeta,
  ): Promise<void> {
    const added = corpus.add(url, title, text, meta);
    if (added.kind === "duplicate") {
      options.logger.debug("portable: duplicate source text counted once", { url, of: added.of.url });
    } else if (added.kind === "full") {
      await gap(`corpus:${url}`, {
        kind: "corpus-limit",
        detail: `${url} was not kept: the retained corpus is full (${CORPUS_CAP_BYTES.toLocaleString("en-US")} UTF-8 bytes); ${added.droppedBytes.toLocaleString("en-US")} bytes dropped.`,
        source: url,
      });
    } else if (added.droppedBytes > 0) {
      await gap(`corpus:${url}`, {
        kind: "corpus-limit",
        detail: `Only the first ${(added.originalBytes - added.droppedBytes).toLocaleString("en-US")} of ${added.originalBytes.toLocaleString("en-US")} bytes of ${url} were kept: the retained corpus is capped at ${CORPUS_CAP_BYTES.toLocaleString("en-US")} UTF-8 bytes.`,
        source: url,
      });
    }
  }
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

const isHttp = (url: string) => /^https?:\/\//i.test(url);

function display(result: number | string, unit: string | null | undefined): string {
  const value = String(result).trim();
  const u = (unit ?? "").trim();
  if (!u || /^(x|times|ratio|fold)$/i.test(u)) return value;
  if (u === "%" || /^per ?cent$/i.test(u)) return `${value.replace(/%$/, "")}%`;
  return `${value} ${u}`;
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
