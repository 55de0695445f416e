/**
 * Perplexity's research trail in a finished Response (WIRE.md §3, §6): each `search_results`
 * item is a search of its `queries`, each `fetch_url_results` item the pages it read. A
 * polled body (poll-only use, or a refused resume) shows them as the completed `search`
 * events a live stream would have emitted from `response.reasoning.*`: one per query, one
 * `open_page` per page.
 */

import { fetchedPagesOf, type WireItem } from "../../src/protocols/responses/wire.js";
import type { MappedEvent } from "../../src/provider.js";

export function perplexityTrail(item: WireItem): MappedEvent[] | undefined {
  if (item.type === "search_results") {
    const queries = item.queries ?? [];
    // A search whose queries the body does not list still happened.
    if (queries.length === 0) return [{ type: "search", action: "search", state: "completed" }];
    return queries.map((query) => ({ type: "search", action: "search", state: "completed", query }));
  }
  if (item.type === "fetch_url_results") {
    return fetchedPagesOf(item.contents).map((page) => ({
      type: "search",
      action: "open_page",
      state: "completed",
      url: page.url,
    }));
  }
  return undefined;
}
