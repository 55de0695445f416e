/**
 * OpenAI's tool-call output items (`file_search_call`, `code_interpreter_call`, `mcp_call`,
 * `mcp_list_tools`) as Sonde `tool` events: the OpenAI dialect's `toolEvent`.
 */
import type { MappedEvent } from "../../provider.js";
import type { CallState } from "./tool-events.js";
import type { WireItem } from "./wire.js";

function parseArguments(value: string | null | undefined): unknown {
  if (!value) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The `tool` event of a tool-call item; undefined for any other item. */
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
