/**
 * A streamed chat completion read as wire events: `data: <JSON>` lines, keepalive
 * comments skipped by the SSE reader, `data: [DONE]` at the end (providers/openrouter/WIRE.md §3). One array
 * of wire events per network read, so the job takes one async step per read.
 */
import type { ProviderName } from "../../events.js";
import type { WireEvent } from "../../provider.js";
import { parseData, readSseBatches } from "../../transport/sse.js";
import { matchContent } from "./chunks.js";

/** A chunk whose content a fast path read (`event`, see `matchContent`); its `data` is built only if read. */
export type ChunkWire = WireEvent & { event?: string };

/** What the stream yields for the `data: [DONE]` line: the end of a complete stream. */
export const DONE = "[DONE]";

export interface ChunkStreamOptions {
  provider: ProviderName;
  idleTimeoutMs: number;
  signal: AbortSignal;
}

/**
 * The chunks of a stream in batches, each payload as `data` (parsed, or built from a fast
 * match when read); the batch with `[DONE]` ends with `{ data: DONE }` and the stream stops
 * there. A malformed event throws after what arrived before it was yielded.
 */
export async function* chunkBatches(
  response: Response,
  options: ChunkStreamOptions,
): AsyncGenerator<ChunkWire[]> {
  for await (const messages of readSseBatches(response, options)) {
    const batch: ChunkWire[] = [];
    for (const message of messages) {
      // Nearly every chunk: plain content, read without building its payload (built if read).
      const content = matchContent(message.data);
      if (content !== undefined) {
        batch.push(content);
        continue;
      }
      let data: unknown;
      try {
        data = parseData(message, options.provider);
      } catch (error) {
        if (batch.length > 0) yield batch; // what arrived before the malformed event
        throw error;
      }
      if (data !== undefined) batch.push({ data });
      else if (message.data.trim() === DONE) {
        // Checked only for what parsed to nothing, so a content chunk is never trimmed twice.
        batch.push({ data: DONE });
        yield batch;
        return;
      }
    }
    if (batch.length > 0) yield batch;
  }
}
