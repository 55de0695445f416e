/**
 * The research trail of a finished Response: its search and tool-call output items as
 * completed (or failed) `search` and `tool` events. A stream announces each item as it
 * starts and ends; a polled Response holds only the finished items, so a poll-only job,
 * a poll fallback after a refused resume and an attach read the trail from here. A
 * provider's own trail items (Perplexity's) are read by its dialect.
 */
import type { MappedEvent } from "../../provider.js";
import type { ResponsesDialect } from "./dialect.js";
import { itemState, searchEvent } from "./tool-events.js";
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
 * Completed searches a live stream delivered that no item id names (Perplexity's, from
 * `response.reasoning.*`), counted by what they say, so a body's trail leaves them out.
 */
export class LiveSearches {
  readonly #keys = new Map<string, number>();

  add(event: MappedEvent): void {
    if (event.type !== "search" || event.state === "started") return;
    const key = keyOf(event);
    this.#keys.set(key, (this.#keys.get(key) ?? 0) + 1);
  }

  /** Whether `event` was delivered live (then it is counted off). */
  take(event: MappedEvent): boolean {
    if (event.type !== "search") return false;
    const exact = keyOf(event);
    // A body search without its query matches any live search of the same action.
    const key =
      this.#keys.has(exact) || event.query || event.url
        ? exact
        : [...this.#keys.keys()].find((k) => k.startsWith(`${event.action}\n`));
    const count = key === undefined ? 0 : (this.#keys.get(key) ?? 0);
    if (count === 0) return false;
    if (count === 1) this.#keys.delete(key!);
    else this.#keys.set(key!, count - 1);
    return true;
  }
}

const keyOf = (event: Extract<MappedEvent, { type: "search" }>) =>
  `${event.action}\n${event.query ?? ""}\n${event.url ?? ""}`;

/**
 * The trail of `output`, in order, as events: all but the first `skip` trail events and
 * those a live stream delivered (item ids in `seen`; `live` for the dialect's own items),
 * in this session or before a ref. Also returns how many trail events the body holds.
 */
export function trailOf(
  output: readonly unknown[] | null | undefined,
  skip: number,
  seen: ReadonlySet<string>,
  own?: { dialect: ResponsesDialect; live: LiveSearches },
): { events: MappedEvent[]; items: number } {
  const events: MappedEvent[] = [];
  let items = 0;
  for (const raw of output ?? []) {
    const item = parseItem(raw);
    if (!item) continue;
    const owned = own?.dialect.trail?.(item);
    if (owned) {
      for (const event of owned) if (items++ >= skip && !own!.live.take(event)) events.push(event);
      continue;
    }
    if (!isTrailItem(item)) continue;
    if (items++ < skip || (item.id && seen.has(item.id))) continue;
    const state = itemState(item);
    const event =
      item.type === "web_search_call" ? searchEvent(item, state) : own?.dialect.toolEvent?.(item, state);
    if (event) events.push(event);
  }
  return { events, items };
}
