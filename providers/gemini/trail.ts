/**
 * The finished side of the research trail: a `*_result` step → completed (or failed)
 * `search` events (one per query, one per page) or a `tool` event. The stream emits these
 * as the steps end; `trailOf` reads them off a stored Interaction (a poll, a GET, the
 * final snapshot after a drop or a refused resume).
 */
import type { MappedEvent } from "../../src/provider.js";
import { stringList } from "./report.js";
import type { WireDelta, WireStep } from "./wire.js";

/** Tool steps reported as `tool` events, by Sonde's tool name. */
export const toolNames: Record<string, string> = {
  code_execution: "code_interpreter",
  mcp_server_tool: "mcp",
  file_search: "file_search",
  google_maps: "google_maps",
};

/** The events that end one call: `queries` are those of its `google_search_call`. */
export function resultEvents(
  type: string,
  data: WireStep | WireDelta,
  callId: string | undefined,
  queries: readonly string[],
): MappedEvent[] {
  const failed = (data as { is_error?: boolean | null }).is_error === true;
  const result = (data as { result?: unknown }).result;
  if (type === "google_search_result") {
    const state = failed ? "failed" : "completed";
    if (queries.length === 0) return [{ type: "search", action: "search", state }];
    return queries.map((query) => ({ type: "search", action: "search", query, state }));
  }
  if (type === "url_context_result") {
    const pages = Array.isArray(result) ? (result as { url?: unknown; status?: unknown }[]) : [];
    return pages
      .filter((page): page is { url: string; status?: unknown } => typeof page?.url === "string")
      .map((page) => ({
        type: "search",
        action: "open_page",
        url: page.url,
        state: (page.status === undefined || page.status === "success") && !failed ? "completed" : "failed",
      }));
  }
  const name = toolNames[type.slice(0, -"_result".length)];
  if (!name) return [];
  return [
    {
      type: "tool",
      name,
      state: failed ? "failed" : "completed",
      ...(callId && { callId }),
      ...(result !== undefined && { output: result }),
    },
  ];
}

/**
 * The finished calls of a stored Interaction, in timeline order, without the first `skip`
 * result steps and those whose call id `delivered` holds (already delivered, live or
 * before a ref was taken). Also returns how many result steps it has.
 */
export function trailOf(
  steps: readonly WireStep[] | null | undefined,
  skip: number,
  delivered: ReadonlySet<string>,
): { events: MappedEvent[]; results: number } {
  const queries = new Map<string, string[]>();
  const events: MappedEvent[] = [];
  let results = 0;
  for (const step of steps ?? []) {
    const type = step.type ?? "";
    if (type === "google_search_call" && step.id) queries.set(step.id, stringList(step.arguments?.queries));
    if (!type.endsWith("_result")) continue;
    const callId = (step as { call_id?: string | null }).call_id ?? undefined;
    if (results++ < skip || (callId && delivered.has(callId))) continue;
    events.push(...resultEvents(type, step, callId, (callId && queries.get(callId)) || []));
  }
  return { events, results };
}
