/**
 * OpenAI's reasoning summary (`response.reasoning_summary_text.delta`) as `thinking` text.
 * A dialect whose provider streams one sets `reasoningSummary` (OpenAI); Perplexity's
 * reasoning comes as a trace instead (reasoning-trace.ts).
 */
import type { MappedEvent } from "../../provider.js";
import type { StreamEventOf } from "./events.js";

export class ReasoningSummary {
  /** The summary part the last delta belonged to. */
  #key: string | undefined;

  map(event: StreamEventOf<"response.reasoning_summary_text.delta">): MappedEvent[] {
    if (!event.delta) return [];
    const key = `${event.item_id}:${event.summary_index ?? 0}`;
    // Summary parts arrive as separate paragraphs ("**Title**\n\n…"); keep them apart.
    const separator = this.#key !== undefined && this.#key !== key ? "\n\n" : "";
    this.#key = key;
    return [{ type: "thinking", delta: separator + event.delta }];
  }
}
