/**
 * The offline demo engine: a deterministic extractive "model" that answers the loop's
 * real prompts in the exact JSON the loop parses (so the real parser, quote verifier,
 * support check and report assembly all run on it), a keyword search over the bundled
 * corpus, and a fetcher that serves only that corpus. No network, no key.
 */
import { readPrompt } from "../prompts.js";
import type { ChatMessage, ChatModel, Fetcher, SearchBackend, SearchResult } from "../types.js";
import { type DemoDocument, demoCorpus } from "./corpus.js";

const STOP_WORDS = new Set(
  "a an and are as at be by can do does for from has have how in into is it its of on or so than that the their them then there these they this to was what when where which who why will with without your you our we not no yes also each every very more most about after before such".split(
    " ",
  ),
);

/** Content words of `text`, lower case, with a crude plural/verb-ending fold. */
export function terms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    .filter((w) => w.length > 2 && !STOP_WORDS.has(w))
    .map((w) => w.replace(/(ies)$/, "y").replace(/(ing|ed|es|s)$/, (m) => (w.length > 5 ? "" : m)));
}

const overlap = (a: readonly string[], b: ReadonlySet<string>) => a.filter((t) => b.has(t)).length;

function sentencesOf(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** The demo model's answer to one of the loop's prompts (JSON text). */
export function demoAnswer(messages: ChatMessage[]): string {
  const { input, sources } = readPrompt(messages);
  const question = String(input.question ?? "");
  const wanted = new Set(terms(question));
  switch (input.task) {
    case "plan": {
      const max = Math.max(1, Number(input.maxQueries ?? 3));
      const keywords = [...new Set(terms(question))].join(" ");
      const queries = [...new Set([question, keywords, `${keywords} evidence`])]
        .filter(Boolean)
        .slice(0, Math.min(max, 3));
      return JSON.stringify({ queries });
    }
    case "extract": {
      const max = Number(input.maxFindings ?? 12);
      const findings: { source: string; claim: string; quote: string }[] = [];
      // The best-matching source is read closely (its sentences are on topic even when they
      // do not repeat the question's words); the others lend their two best sentences.
      const relevance = (text: string) => overlap([...new Set(terms(text))], wanted);
      const best = Math.max(0, ...[...sources.values()].map(relevance));
      for (const [id, text] of sources) {
        const close = best > 0 && relevance(text) === best;
        const ranked = sentencesOf(text)
          .map((sentence, position) => ({ sentence, position, score: overlap(terms(sentence), wanted) }))
          .filter((s) => (close || s.score > 0) && s.sentence.split(/\s+/).length >= 8)
          .sort((a, b) => b.score - a.score || a.position - b.position)
          .slice(0, close ? 4 : 2)
          .sort((a, b) => a.position - b.position);
        for (const { sentence } of ranked) findings.push({ source: id, claim: sentence, quote: sentence });
      }
      return JSON.stringify({ findings: findings.slice(0, max) });
    }
    case "check": {
      const findings = (input.findings ?? []) as { id: string; claim: string; quote: string }[];
      return JSON.stringify({
        checks: findings.map((f) => {
          const claim = terms(f.claim);
          const share = claim.length ? overlap(claim, new Set(terms(f.quote))) / claim.length : 0;
          return share >= 0.6
            ? { id: f.id, verdict: "supported", reason: "The quotation states the claim." }
            : { id: f.id, verdict: "unsupported", reason: "The quotation does not state the claim." };
        }),
      });
    }
    case "write": {
      const findings = (input.findings ?? []) as { id: string; claim: string; title?: string; url: string }[];
      const bySource = new Map<string, { title: string; items: typeof findings }>();
      for (const f of findings) {
        const group = bySource.get(f.url) ?? { title: f.title ?? f.url, items: [] };
        group.items.push(f);
        bySource.set(f.url, group);
      }
      const cite = (f: (typeof findings)[number]) =>
        /[.!?]$/.test(f.claim) ? f.claim.replace(/([.!?])$/, ` [${f.id}]$1`) : `${f.claim} [${f.id}].`;
      return JSON.stringify({
        title: `Research brief: ${question}`,
        sections: [
          {
            heading: "Summary",
            paragraphs: [
              `This brief answers the question from ${findings.length} verified findings drawn from the offline demo corpus; every sentence below cites the passage it rests on.`,
            ],
          },
          ...[...bySource.values()].map((group) => ({
            heading: group.title,
            paragraphs: [group.items.map(cite).join(" ")],
          })),
        ],
        derived: [],
      });
    }
    default:
      return "The offline demo model only answers the research loop's own prompts.";
  }
}

/** The demo chat model: deterministic, instant, free. */
export const demoChatModel: ChatModel = {
  async complete(request) {
    if (request.signal.aborted) throw request.signal.reason;
    const content = demoAnswer(request.messages);
    return {
      content,
      finishReason: "stop",
      inputTokens: estimateTokens(request.messages.map((m) => m.content).join("\n")),
      outputTokens: estimateTokens(content),
      reasoningTokens: 0,
      costUSD: 0,
    };
  },
};

/**
 * Keyword search over `documents` (title words count double).
 * @example
 * ```ts
 * import { corpusFetcher, corpusSearch, demoCorpus } from "sonde/providers/portable";
 *
 * // Research over your own documents, never the web:
 * const client = new Sonde({
 *   portable: { search: corpusSearch(demoCorpus), fetcher: corpusFetcher(demoCorpus), chat: { local: { baseURL } } },
 * });
 * ```
 */
export function corpusSearch(documents: readonly DemoDocument[], limit = 4): SearchBackend {
  return {
    async search(query, { signal }) {
      if (signal.aborted) throw signal.reason;
      const wanted = new Set(terms(query));
      return documents
        .map((doc, position) => ({
          doc,
          position,
          score: 2 * overlap(terms(doc.title), wanted) + overlap([...new Set(terms(doc.text))], wanted),
        }))
        .filter((r) => r.score > 0)
        .sort((a, b) => b.score - a.score || a.position - b.position)
        .slice(0, limit)
        .map(
          ({ doc }): SearchResult => ({ url: doc.url, title: doc.title, snippet: sentencesOf(doc.text)[0] }),
        );
    },
  };
}

/**
 * Serves `documents` by URL; anything else is unreadable (the demo never touches the network).
 * @example
 * ```ts
 * import { corpusFetcher, demoCorpus } from "sonde/providers/portable";
 *
 * const page = await corpusFetcher(demoCorpus).fetch(demoCorpus[0]!.url, { signal: AbortSignal.timeout(1_000) });
 * ```
 */
export function corpusFetcher(documents: readonly DemoDocument[]): Fetcher {
  const byUrl = new Map(documents.map((d) => [d.url, d]));
  return {
    async fetch(url, { signal }) {
      if (signal.aborted) throw signal.reason;
      const doc = byUrl.get(url);
      if (!doc) throw new Error("the offline demo reads only its bundled corpus, and this URL is not in it");
      return { url: doc.url, text: doc.text, contentType: "text/plain; charset=utf-8", title: doc.title };
    },
  };
}

export const demoSearch = corpusSearch(demoCorpus);
export const demoFetcher = corpusFetcher(demoCorpus);
