import { type EventSourceMessage, EventSourceParserStream } from "eventsource-parser/stream";
import { StreamInterruptedError } from "../errors.js";
import type { ProviderName } from "../events.js";
import { toTransportError } from "./http.js";

export type { EventSourceMessage };

export interface SseOptions {
  provider: ProviderName;
  /** No bytes at all (keepalive comments included) for this long while we wait = dropped. */
  idleTimeoutMs: number;
  signal?: AbortSignal;
  /** Called for `: comment` lines (OpenRouter's `: OPENROUTER PROCESSING` keepalives). */
  onComment?: (comment: string) => void;
  /** Largest single event we accept before treating the stream as broken. @defaultValue 16 MiB */
  maxEventBytes?: number;
}

/**
 * Reads a `text/event-stream` body as messages, on eventsource-parser's stream:
 * CRLF/LF/CR line endings, events and multi-byte characters split across chunks,
 * `id:` fields and comments are all its job. Ours is the idle watchdog, which runs
 * only while we are waiting for the network (a slow consumer is not a dead stream),
 * and is reset by every byte, keepalives included.
 *
 * Throws `StreamInterruptedError` on idle timeout, reset or malformed framing; a clean
 * end of body just ends the iteration (whether that is success is the caller's call).
 */
export async function* readSse(response: Response, options: SseOptions): AsyncGenerator<EventSourceMessage> {
  if (!response.body)
    throw new StreamInterruptedError(`${options.provider}: the stream had no body`, {
      provider: options.provider,
    });
  let waiting = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onIdle: (() => void) | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => onIdle?.(), options.idleTimeoutMs);
  };
  const activity = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (waiting) arm();
      controller.enqueue(chunk);
    },
  });
  let parseError: Error | undefined;
  const messages = response.body
    .pipeThrough(activity)
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(
      new EventSourceParserStream({
        onComment: options.onComment,
        maxBufferSize: options.maxEventBytes ?? 16 * 1024 * 1024,
        onError: (error) => {
          // Unknown fields are legal SSE and ignored; a buffer overflow means a broken stream.
          if ((error as { type?: string }).type === "max-buffer-size-exceeded") parseError = error;
        },
      }),
    );
  const reader = messages.getReader();
  try {
    while (true) {
      if (options.signal?.aborted)
        throw toTransportError(options.signal.reason, options.provider, options.signal);
      waiting = true;
      arm();
      const idle = new Promise<never>((_, reject) => {
        onIdle = () =>
          reject(
            new StreamInterruptedError(
              `${options.provider}: no data for ${options.idleTimeoutMs} ms (not even a keepalive); treating the stream as dropped`,
              { provider: options.provider },
            ),
          );
      });
      let result: ReadableStreamReadResult<EventSourceMessage>;
      try {
        result = await Promise.race([reader.read(), idle]);
      } catch (error) {
        throw toTransportError(error, options.provider, options.signal);
      } finally {
        waiting = false;
        clearTimeout(timer);
      }
      if (parseError)
        throw new StreamInterruptedError(`${options.provider}: ${parseError.message}`, {
          provider: options.provider,
        });
      if (result.done) return;
      yield result.value;
    }
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
}

/** Parses an SSE `data:` payload as JSON; `[DONE]` sentinels yield undefined. */
export function parseData(message: EventSourceMessage, provider: ProviderName): unknown {
  const data = message.data.trim();
  if (data === "" || data === "[DONE]") return undefined;
  try {
    return JSON.parse(data);
  } catch (error) {
    throw new StreamInterruptedError(`${provider}: malformed event data (${(error as Error).message})`, {
      provider,
    });
  }
}
