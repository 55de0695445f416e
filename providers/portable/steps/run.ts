/**
 * What one run of the loop shares between its steps: the inputs, the corpus read so far,
 * the keyed emitters, and the outcome taken so far (`stop` is why the report will be
 * partial). A run is rebuilt from scratch on every re-run; only receipts and logged event
 * keys survive a restart, so everything here must follow from them deterministically.
 */
import type { Logger } from "../../../src/provider.js";
import { CORPUS_CAP_BYTES, Corpus, type SourceMeta } from "../corpus.js";
import { domainFilter } from "../domains.js";
import { eventKey, gapKey, type UsageLabel } from "../keys.js";
import type { Budget, Operations } from "../operations.js";
import type { Finding, Report } from "../report.js";
import type { ChatModel, Fetcher, SearchBackend, StoredRequest } from "../types.js";
import type { WireData } from "../wire/events.js";

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

export type Gap = Extract<WireData, { type: "gap" }>["gap"];
type Phase = Extract<WireData, { type: "phase" }>["phase"];

export interface Run {
  readonly options: LoopOptions;
  readonly request: StoredRequest;
  readonly ops: Operations;
  readonly budget: Budget;
  /** Whether the web is searched: asked for, or no inline documents were given. */
  readonly web: boolean;
  readonly filter: ReturnType<typeof domainFilter>;
  readonly corpus: Corpus;
  /** Why the run ends with a partial report; unset while it can still complete. */
  stop: string | undefined;
  /** Findings that passed the support check, numbered F1…Fn. */
  checked: Finding[];
  /** Findings quoted exactly but not (yet) checked for support. */
  unchecked: Finding[];
  /** Why the support check did not run, when findings were quoted but not checked. */
  checkSkipped: { kind: Gap["kind"]; why: string } | undefined;
  /** The written report, when the write step succeeded. */
  report: Report | undefined;
  phase(name: Phase): Promise<void>;
  /** Logs a gap under the event key `gap:<name>`. */
  gap(name: string, value: Gap): Promise<void>;
  /** Logs the cumulative usage under `usage:<label>`. */
  usage(label: UsageLabel): Promise<void>;
  /** Adds a source to the corpus, logging a `corpus:<url>` gap when the cap cuts it. */
  addToCorpus(url: string, title: string | undefined, text: string, meta?: SourceMeta): Promise<void>;
}

export function startRun(options: LoopOptions): Run {
  const { request, ops, budget, emit, logger } = options;
  const documents = request.sources?.documents ?? [];
  const corpus = new Corpus();
  const gap = (name: string, value: Gap) => emit(eventKey.gap(name), { type: "gap", gap: value });
  return {
    options,
    request,
    ops,
    budget,
    web: request.sources?.web ?? documents.length === 0,
    filter: domainFilter(request.sources?.allowDomains, request.sources?.denyDomains),
    corpus,
    stop: undefined,
    checked: [],
    unchecked: [],
    checkSkipped: undefined,
    report: undefined,
    phase: (name) => emit(eventKey.phase(name), { type: "phase", phase: name }),
    gap,
    usage: (label) => emit(eventKey.usage(label), { type: "usage", usage: ops.usage() }),
    async addToCorpus(url, title, text, meta) {
      const added = corpus.add(url, title, text, meta);
      if (added.kind === "duplicate") {
        logger.debug("portable: duplicate source text counted once", { url, of: added.of.url });
      } else if (added.kind === "full") {
        await gap(gapKey.corpus(url), {
          kind: "corpus-limit",
          detail: `${url} was not kept: the retained corpus is full (${CORPUS_CAP_BYTES.toLocaleString("en-US")} UTF-8 bytes); ${added.droppedBytes.toLocaleString("en-US")} bytes dropped.`,
          source: url,
        });
      } else if (added.droppedBytes > 0) {
        await gap(gapKey.corpus(url), {
          kind: "corpus-limit",
          detail: `Only the first ${(added.originalBytes - added.droppedBytes).toLocaleString("en-US")} of ${added.originalBytes.toLocaleString("en-US")} bytes of ${url} were kept: the retained corpus is capped at ${CORPUS_CAP_BYTES.toLocaleString("en-US")} UTF-8 bytes.`,
          source: url,
        });
      }
    },
  };
}

export const clip = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
