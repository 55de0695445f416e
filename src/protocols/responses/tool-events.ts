/**
 * Output items and reasoning events that are tool calls, as Sonde `search` and `tool`
 * events: OpenAI's `web_search_call`, `file_search_call`, `code_interpreter_call` and
 * `mcp_*` items, and Perplexity's `response.reasoning.search_queries` /
 * `fetch_url_queries` events and `search_results` / `fetch_url_results` items.
 */
import type { MappedEvent } from "../../provider.js";
import type { WireItem } from "./wire.js";

type CallState = "started" | "completed" | "failed";

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

function parseArguments(value: string | null | undefined): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

export function toolEvent(item: WireItem, state: CallState): MappedEvent | undefined {
  const callId = item.id ?? undefined;
  const base = { type: "tool" as const, state, ...(callId && { callId }) };
  const done = state !== "started";
  switch (item.type) {
    case "file_search_call":
      return {
        ...base,
        name: "file_search",
        ...(item.queries?.length && { input: { queries: item.queries } }),
        ...(done && item.results != null && { output: item.results }),
      };
    case "code_interpreter_call":
      return {
        ...base,
        name: "code_interpreter",
        ...(item.code && { input: { code: item.code } }),
        ...(done && item.outputs != null && { output: item.outputs }),
      };
    case "mcp_call":
      return {
        ...base,
        name: "mcp",
        input: {
          server: item.server_label ?? undefined,
          tool: item.name ?? undefined,
          ...(item.arguments && { arguments: parseArguments(item.arguments) }),
        },
        ...(done && (item.output != null || item.error != null) && { output: item.output ?? item.error }),
      };
    case "mcp_list_tools": {
      const tools = Array.isArray(item.tools)
        ? item.tools.map((t) => (t as { name?: unknown })?.name).filter((n) => typeof n === "string")
        : [];
      return {
        ...base,
        name: "mcp",
        input: { server: item.server_label ?? undefined, operation: "list_tools" },
        ...(done && { output: item.error ?? { tools } }),
      };
    }
    default:
      return undefined;
  }
}

export function itemState(item: WireItem): "completed" | "failed" {
  return item.status === "failed" || item.status === "incomplete" || item.error ? "failed" : "completed";
}
