/**
 * The research trail of a finished Response: its search and tool-call output items as
 * completed (or failed) `search` and `tool` events. A stream announces each item as it
 * starts and ends; a polled Response holds only the finished items, so a poll-only job,
 * a poll fallback after a refused resume and an attach read the trail from here.
 */
import type { MappedEvent } from "../../provider.js";
import { itemState, searchEvent, toolEvent } from "./tool-events.js";
import { parseItem, type WireItem } from "./wire.js";

/** Output item types that belong to the trail (Perplexity's search and fetch items are counted apart). */
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

/**
 * The trail items of `output`, in order, as events: all but the first `skip` and those
 * whose id `seen` holds (delivered by a live stream, in this session or before a ref).
 * Also returns how many trail items there are.
 */
export function trailOf(
  output: readonly unknown[] | null | undefined,
  skip: number,
  seen: ReadonlySet<string>,
): { events: MappedEvent[]; items: number } {
  const events: MappedEvent[] = [];
  let items = 0;
  for (const raw of output ?? []) {
    const item = parseItem(raw);
    if (!item || !isTrailItem(item)) continue;
    if (items++ < skip || (item.id && seen.has(item.id))) continue;
    const state = itemState(item);
    const event = item.type === "web_search_call" ? searchEvent(item, state) : toolEvent(item, state);
    if (event) events.push(event);
  }
  return { events, items };
}
