/**
 * Perplexity's reasoning trace (`response.reasoning.*`, providers/perplexity/WIRE.md §4): free-text
 * thoughts tied to no item, search queries and their results (the sources `[web:N]`
 * markers point at), and fetched pages. Maps them to `thinking`, `search` and running
 * `usage` events; the caller sets the phase.
 */

import type { ResearchPhase } from "../../events.js";
import type { MappedEvent } from "../../provider.js";
import type { StreamEventOf } from "./events.js";
import type { SourceIndex } from "./text.js";
import type { ToolCounts } from "./tool-counts.js";
import { pageEvents, queryEvents } from "./tool-events.js";
import { fetchedPagesOf, searchResultsOf } from "./wire.js";

export type TraceEvent = StreamEventOf<
  | "response.reasoning.started"
  | "response.reasoning.stopped"
  | "response.reasoning.search_queries"
  | "response.reasoning.search_results"
  | "response.reasoning.fetch_url_queries"
  | "response.reasoning.fetch_url_results"
>;

interface TraceOptions {
  includeThinking: boolean;
  counts: ToolCounts;
  sources: SourceIndex;
  /** Sets the phase; returns its `phase` event, or nothing when unchanged. */
  phase: (phase: ResearchPhase) => MappedEvent[];
}

export class ReasoningTrace {
  /** Queries announced and not yet answered by results. */
  #pending: string[] = [];

  readonly #options: TraceOptions;

  constructor(options: TraceOptions) {
    this.#options = options;
  }

  map(event: TraceEvent): MappedEvent[] {
    const thought =
      this.#options.includeThinking && event.thought
        ? [{ type: "thinking" as const, delta: event.thought }]
        : [];
    switch (event.type) {
      case "response.reasoning.started":
      case "response.reasoning.stopped":
        return [...this.#options.phase("reasoning"), ...thought];
      case "response.reasoning.search_queries":
        this.#options.counts.searchAnnounced();
        this.#pending = event.queries ?? [];
        return [...thought, ...this.#options.phase("searching"), ...queryEvents(event.queries)];
      case "response.reasoning.search_results": {
        this.#options.sources.add(searchResultsOf(event.results));
        const done = this.#pending.map(
          (query): MappedEvent => ({ type: "search", action: "search", state: "completed", query }),
        );
        this.#pending = [];
        // Trail events first in a batch: a ref's cursorOffset counts them first (adapter.ts).
        return [...done, ...thought, this.#options.counts.usageEvent()];
      }
      case "response.reasoning.fetch_url_queries":
        return [...thought, ...this.#options.phase("reading"), ...pageEvents(event.urls ?? [], "started")];
      case "response.reasoning.fetch_url_results": {
        const pages = fetchedPagesOf(event.contents);
        this.#options.counts.pagesFetched(pages.length);
        const urls = pages.map((page) => page.url);
        return [...pageEvents(urls, "completed"), ...thought, this.#options.counts.usageEvent()];
      }
    }
  }
}
