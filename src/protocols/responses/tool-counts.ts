/**
 * Searches and fetched pages a run showed, for `usage`: OpenAI's built-in searches are
 * not in `usage` at all (count `web_search_call` items), and a Perplexity run whose usage
 * is null (cancelled) is known only by what its stream and snapshot listed.
 */
import type { MappedEvent } from "../../provider.js";
import type { CountedUsage } from "./usage.js";

/** Key of a `search_results` item: its position, the same in the stream (`output_index`) and in `output`. */
export const searchItemKey = (index: number | null | undefined) => `results#${index ?? "?"}`;

export class ToolCounts {
  /** `web_search_call` ids and `search_results` item positions. */
  readonly #searches = new Set<string>();
  #searchItems = 0;
  /** Perplexity announces searches as events and may also list them as items: the larger count wins. */
  #searchEvents = 0;
  #fetchEvents = 0;
  #fetchItems = 0;

  /** A search item (by id or position); the same one twice counts once. */
  addSearch(key: string): void {
    if (this.#searches.has(key)) return;
    this.#searches.add(key);
    if (key.startsWith("results#")) this.#searchItems++;
  }

  searchAnnounced(): void {
    this.#searchEvents++;
  }

  pagesFetched(count: number): void {
    this.#fetchEvents += count;
  }

  /** Pages the items list (a snapshot lists them all: the larger figure is kept). */
  pagesListed(count: number): void {
    this.#fetchItems = Math.max(this.#fetchItems, count);
  }

  /** `web_search_call` items seen so far (OpenAI's running figure). */
  get searchItems(): number {
    return this.#searches.size;
  }

  get counted(): CountedUsage {
    return {
      searches: this.#searches.size + Math.max(0, this.#searchEvents - this.#searchItems),
      fetches: Math.max(this.#fetchEvents, this.#fetchItems),
    };
  }

  usageEvent(): MappedEvent {
    const { searches, fetches } = this.counted;
    return { type: "usage", usage: { searches, ...(fetches > 0 && { fetches }) } };
  }
}
