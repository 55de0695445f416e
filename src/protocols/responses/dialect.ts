/**
 * What a provider configures in the Responses protocol: its name, its HTTP client and
 * paths, how it cites, how it charges, and how it words a lost submission. The protocol
 * module (events, items, resume, snapshots, polling) is the same for every provider.
 */

import type { SondeError } from "../../errors.js";
import type { Citation, ProviderName } from "../../events.js";
import type { MappedEvent, ProviderContext, UsageReport } from "../../provider.js";
import type { HttpClient } from "../../transport/http.js";
import type { UrlAnnotations } from "./annotations.js";
import type { ReasoningSummary } from "./reasoning-summary.js";
import type { ReasoningTrace } from "./reasoning-trace.js";
import type { SourceIndex } from "./text.js";
import type { CallState } from "./tool-events.js";
import type { CountedUsage } from "./usage.js";
import type { WireItem, WireUsage } from "./wire.js";

/**
 * Citations marked inline in the answer text (Perplexity's `[web:N]`). Stateful: each
 * call scans the text appended since the last one (offsets count from the first call's
 * start), holding back a tail that may be the start of a marker unless `final`. O(appended):
 * the report is never rescanned, and the scanner keeps no copy of it.
 */
export interface InlineCitations {
  scan(appended: string, sources: SourceIndex, final: boolean): readonly Citation[];
}

/** How a provider's Responses traffic differs from the protocol's common reading. */
export interface ResponsesDialect {
  provider: ProviderName;
  /** For messages: "OpenAI", "Perplexity". */
  label: string;
  /** The usage report of a `usage` block (null while running or when cancelled) and what was counted. */
  usage(usage: WireUsage | null | undefined, counted: CountedUsage): UsageReport;
  /** Set when the provider cites inline rather than by `url_citation` annotations. */
  inlineCitations?(): InlineCitations;
  /**
   * Set when the provider cites by `url_citation` annotations (OpenAI: `urlAnnotations`).
   * Without it or with `inlineCitations`, annotations are not read.
   */
  annotations?: UrlAnnotations;
  /**
   * Set when the provider streams a reasoning trace (`response.reasoning.*`, Perplexity:
   * `ReasoningTrace`); without it such events map to nothing.
   */
  reasoningTrace?: typeof ReasoningTrace;
  /**
   * Set when the provider streams a reasoning summary (`response.reasoning_summary_text.delta`,
   * OpenAI: `ReasoningSummary`); without it such deltas map to nothing.
   */
  reasoningSummary?: typeof ReasoningSummary;
  /**
   * The completed `search`/`tool` events of one of the provider's own output items in a
   * finished Response (Perplexity's `search_results`, `fetch_url_results`), as its live
   * stream would have emitted them; undefined when the item is not a trail item of its own.
   */
  trail?(item: WireItem): MappedEvent[] | undefined;
  /**
   * The `tool` event of one of the provider's tool-call output items (OpenAI's file search,
   * code interpreter and MCP calls: tool-calls.ts); undefined for other items. Without it,
   * such items map to nothing.
   */
  toolEvent?(item: WireItem, state: CallState): MappedEvent | undefined;
}

/** The provider's endpoints and the readings of its HTTP failures that the protocol acts on. */
export interface ResponsesEndpoints {
  http(context: ProviderContext): HttpClient;
  /** `responses` (OpenAI), `v1/agent` (Perplexity): relative to the base URL. */
  createPath(context: ProviderContext): string;
  /** `GET` snapshot / re-stream path of one response. */
  responsePath(context: ProviderContext, id: string): string;
  cancelPath(context: ProviderContext, id: string): string;
  /** The server refused to re-stream (the reconnect window passed): poll instead. */
  isStreamRefused(error: unknown): boolean;
  /**
   * A failure of the create POST that leaves its outcome unknown although a status line
   * came back (Perplexity: any 5xx). Timeouts, resets and gateway errors always are.
   */
  isIndeterminateCreateFailure?(error: SondeError): boolean;
  /** Where a user checks for a run Sonde lost track of ("platform.openai.com/logs"). */
  dashboardHint: string;
}

export interface ResponsesEngine {
  dialect: ResponsesDialect;
  endpoints: ResponsesEndpoints;
}
