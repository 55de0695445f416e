/**
 * Output items and reasoning events that are searches, as Sonde `search` events: OpenAI's
 * `web_search_call` items, and Perplexity's `response.reasoning.search_queries` /
 * `fetch_url_queries` events and `search_results` / `fetch_url_results` items. OpenAI's
 * other tool calls are its dialect's (tool-calls.ts), so other engines do not carry them.
 */
import type { MappedEvent } from "../../provider.js";
import type { WireItem } from "./wire.js";

/** Where a tool call or search is. */
export type CallState = "started" | "completed" | "failed";

export function searchEvent(item: WireItem, state: CallState): MappedEvent {
  const action = item.action;
  const kind =
    action?.type === "open_page" ? "open_page" : action?.type?.startsWith("find") ? "find_in_page" : "search";
  const query = kind === "find_in_page" ? action?.pattern : (action?.query ?? action?.queries?.join("; "));
  return {
    type: "search",
    action: kind,
    state,
    ...(query && { query }),
    ...(action?.url && { url: action.url }),
  };
}

/** Perplexity's searches are announced as queries (one event, several queries) and never "end" on their own. */
export function queryEvents(queries: readonly string[] | null | undefined): MappedEvent[] {
  return (queries ?? []).map((query) => ({ type: "search", action: "search", state: "started", query }));
}

export function pageEvents(urls: readonly string[], state: CallState): MappedEvent[] {
  return urls.map((url) => ({ type: "search", action: "open_page", state, url }));
}

export function itemState(item: WireItem): "completed" | "failed" {
  return item.status === "failed" || item.status === "incomplete" || item.error ? "failed" : "completed";
}
