/**
 * The replay contract: every key the portable engine writes into a job's event log and
 * receipt store. Stored jobs depend on these exact strings. A re-run after a restart
 * replays a call only if its receipt key matches, and appends an event only if its key
 * was not logged before; changing one string here therefore breaks re-attach of every
 * stored job (repeated calls, duplicate events). Add new keys; never edit existing ones.
 * test/portable/keys.test.ts pins them to their literal values.
 */
import type { WireData } from "./wire/events.js";

type Phase = Extract<WireData, { type: "phase" }>["phase"];
/** Which text a `text:` or `citation:` event belongs to. */
export type Variant = "final" | "partial";
/** The checkpoints after which cumulative usage is logged. */
export type UsageLabel = "plan" | "search" | "fetch" | "extract" | "check" | "write" | "final";

/** Keys of the model calls (each becomes a receipt key through `receiptKey.model`). */
export const modelCall = {
  plan: "plan",
  extract: (batch: number) => `extract:${batch}`,
  check: "check",
  write: "write",
} as const;

/** The URL an inline document without one is cited under (and named by in `corpus:` gaps). */
export const documentUrl = (id: string | number) => `document:${id}`;

/** Receipt keys: one per model, search or fetch call, replayed instead of called again. */
export const receiptKey = {
  model: (call: string) => `model:${call}`,
  /** The one retry of a malformed model answer. */
  modelRetry: (call: string) => `model:${call}#retry`,
  search: (query: string) => `search:${query}`,
  fetch: (url: string) => `fetch:${url}`,
} as const;

/** Gap names; each is logged as the event key `gap:<name>` (see `eventKey.gap`). */
export const gapKey = {
  searchBudgetZero: "search-budget-zero",
  planBudget: "plan-budget",
  plan: "plan",
  readBudget: "read-budget",
  excluded: (url: string) => `excluded:${url}`,
  searchBudget: "search-budget",
  searchFailed: (query: string) => `search-failed:${query}`,
  fetchBudget: "fetch-budget",
  unreadable: (url: string) => `unreadable:${url}`,
  noSources: "no-sources",
  corpus: (url: string) => `corpus:${url}`,
  extractBudget: "extract-budget",
  extract: (batch: number) => `extract:${batch}`,
  rejectedQuotes: "rejected-quotes",
  noFindings: "no-findings",
  check: "check",
  verdict: (findingId: string) => `verdict:${findingId}`,
  checkMissing: "check-missing",
  write: "write",
  derived: (id: string) => `derived:${id}`,
  draft: "draft",
  deadline: "deadline",
  unverified: "unverified",
  uncheckedCitations: "unchecked-citations",
} as const;

/**
 * Event keys of the loop. `created`, `status:queued`, `status:running` and
 * `status:terminal` are written by adapter.ts and runner.ts and belong to the same contract.
 */
export const eventKey = {
  created: "created",
  statusQueued: "status:queued",
  statusRunning: "status:running",
  statusTerminal: "status:terminal",
  phase: (name: Phase) => `phase:${name}`,
  gap: (name: string) => `gap:${name}`,
  usage: (label: UsageLabel) => `usage:${label}`,
  searchStarted: (query: string) => `search:started:${query}`,
  searchDone: (query: string) => `search:done:${query}`,
  openStarted: (url: string) => `open:started:${url}`,
  openDone: (url: string) => `open:done:${url}`,
  text: (variant: Variant, chunk: number) => `text:${variant}:${chunk}`,
  citation: (variant: Variant, index: number) => `citation:${variant}:${index}`,
} as const;
