/**
 * Response output items → the research trail: `search` events for web searches (search,
 * open_page, find_in_page) and `tool` events for file search, MCP and code interpreter.
 * Streams announce each item as it starts and ends; a polled Response holds only the
 * finished items, which `trailOf` turns into completed (or failed) events.
 */
import type { MappedEvent } from "../../src/provider.js";
import { WireItem } from "./wire.js";

/** Output item types that belong to the trail. */
const trailTypes = new Set([
  "web_search_call",
  "file_search_call",
  "code_interpreter_call",
  "mcp_call",
  "mcp_list_tools",
]);

export function isTrailItem(item: WireItem): boolean {
  return trailTypes.has(item.type);
}

export function searchEvent(item: WireItem, state: "started" | "completed" | "failed"): MappedEvent {
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

function parseArguments(value: string | null | undefined): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

export function toolEvent(
  item: WireItem,
  state: "started" | "completed" | "failed",
): MappedEvent | undefined {
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

/**
 * The trail of a finished Response: a completed or failed event per trail item, in output
 * order, skipping the first `skip` trail items and any whose id `seen` holds (both already
 * delivered, by a live stream before a ref was taken or in this session).
 */
export function trailOf(
  output: readonly unknown[] | null | undefined,
  skip: number,
  seen: ReadonlySet<string>,
): MappedEvent[] {
  const events: MappedEvent[] = [];
  let index = 0;
  for (const raw of output ?? []) {
    const parsed = WireItem.safeParse(raw);
    if (!parsed.success || !isTrailItem(parsed.data)) continue;
    const item = parsed.data;
    if (index++ < skip || (item.id && seen.has(item.id))) continue;
    const event =
      item.type === "web_search_call" ? searchEvent(item, itemState(item)) : toolEvent(item, itemState(item));
    if (event) events.push(event);
  }
  return events;
}
