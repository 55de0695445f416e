import {
  createParser,
  type EventSourceMessage,
  type EventSourceParser,
  ParseError,
} from "eventsource-parser";
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
  /** Largest single event (its data, in characters) we accept before treating the stream as broken. @defaultValue 16 Mi */
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
/**
 * eventsource-parser's parser as a stream, except that a buffer overflow arrives in order,
 * after the events that fully arrived before it: the library's own stream errors at once,
 * which discards those events. Unknown fields are legal SSE and ignored.
 */
function parserStream(options: {
  onComment: ((comment: string) => void) | undefined;
  maxBufferSize: number;
}): TransformStream<string, EventSourceMessage | ParseError> {
  let parser: EventSourceParser;
  let broken = false;
  return new TransformStream({
    start(controller) {
      parser = createParser({
        onEvent: (event) => controller.enqueue(event),
        onComment: options.onComment,
        maxBufferSize: options.maxBufferSize,
        onError: (error) => {
          if (error.type !== "max-buffer-size-exceeded") return;
          broken = true;
          controller.enqueue(error);
        },
      });
    },
    transform(chunk) {
      if (!broken) parser.feed(chunk);
    },
  });
}

export async function* readSse(response: Response, options: SseOptions): AsyncGenerator<EventSourceMessage> {
  const { provider, idleTimeoutMs } = options;
  const maxEventBytes = options.maxEventBytes ?? 16 * 1024 * 1024;
  if (!response.body) throw new StreamInterruptedError(`${provider}: the stream had no body`, { provider });
  // One timer for the whole stream, no per-event allocation: it records the time of the
  // last byte and, when it fires, re-arms for the remainder unless we have really been
  // waiting for `idleTimeoutMs` with nothing arriving.
  let waiting = false;
  let lastActivity = performance.now();
  let idled = false;
  // A reset must not cost events that fully arrived: instead of erroring the pipe (which
  // discards what the parser has queued), the byte source closes and remembers why, so
  // every complete event is read before the drop is reported.
  let transportError: unknown;
  const body = response.body.getReader();
  const bytes = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await body.read();
        if (done) return controller.close();
        lastActivity = performance.now();
        controller.enqueue(value);
      } catch (error) {
        transportError = error;
        controller.close();
      }
    },
    cancel: (reason) => body.cancel(reason),
  });
  const reader = bytes
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .pipeThrough(parserStream({ onComment: options.onComment, maxBufferSize: maxEventBytes }))
    .getReader();
  const check = () => {
    const quiet = performance.now() - lastActivity;
    if (waiting && quiet >= idleTimeoutMs) {
      idled = true;
      reader.cancel().catch(() => {}); // resolves the pending read with done
      return;
    }
    timer = setTimeout(check, waiting ? idleTimeoutMs - quiet : idleTimeoutMs);
    timer.unref?.();
  };
  let timer: ReturnType<typeof setTimeout> = setTimeout(check, idleTimeoutMs);
  timer.unref?.();
  try {
    while (true) {
      if (options.signal?.aborted) throw toTransportError(options.signal.reason, provider, options.signal);
      // A slow consumer is not a dead stream: the idle clock starts when we ask for more.
      if (!waiting) lastActivity = Math.max(lastActivity, performance.now());
      waiting = true;
      let result: ReadableStreamReadResult<EventSourceMessage | ParseError>;
      try {
        result = await reader.read();
      } catch (error) {
        throw toTransportError(error, provider, options.signal);
      } finally {
        waiting = false;
      }
      if (idled) {
        throw new StreamInterruptedError(
          `${provider}: no data for ${idleTimeoutMs} ms (not even a keepalive); treating the stream as dropped`,
          { provider },
        );
      }
      if (result.done) {
        if (transportError !== undefined) throw toTransportError(transportError, provider, options.signal);
        return;
      }
      // The parser bounds what it buffers across chunks, not an event that arrives whole
      // inside one chunk; the limit is on the event, so it is checked here too.
      if (result.value instanceof ParseError)
        throw new StreamInterruptedError(`${provider}: ${result.value.message}`, { provider });
      if (result.value.data.length > maxEventBytes)
        throw new StreamInterruptedError(
          `${provider}: an event of ${result.value.data.length} characters exceeds the ${maxEventBytes}-character limit; treating the stream as broken`,
          { provider },
        );
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
