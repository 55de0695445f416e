import type { EventSourceMessage } from "eventsource-parser";
import { MissingDependencyError, StreamInterruptedError } from "../errors.js";
import type { ProviderName } from "../events.js";
import { loadOnce } from "../load-once.js";
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
 * Reads a `text/event-stream` body as messages, with eventsource-parser fed once per
 * network read (no stream pipeline between the socket and us): CRLF/LF/CR line endings,
 * events and multi-byte characters split across reads, `id:` fields and comments are
 * its job. Ours is the idle watchdog, which runs only while we are waiting for the
 * network (a slow consumer is not a dead stream), and is reset by every byte,
 * keepalives included.
 *
 * Throws `StreamInterruptedError` on idle timeout, reset or malformed framing; a clean
 * end of body just ends the iteration (whether that is success is the caller's call).
 * A reset does not cost events that fully arrived: they are all yielded first.
 */
export async function* readSse(response: Response, options: SseOptions): AsyncGenerator<EventSourceMessage> {
  for await (const batch of readSseBatches(response, options)) {
    for (const message of batch) {
      if (options.signal?.aborted)
        throw toTransportError(options.signal.reason, options.provider, options.signal);
      yield message;
    }
  }
}

const loadParser = loadOnce(() => import("eventsource-parser"));

/**
 * The SSE parser, loaded with the first stream (a poll-only job never needs it). A streaming
 * session awaits it before its job-creating request: a parser that cannot load (a bundle that
 * dropped its chunk) fails the job before anything is sent, never after a job may exist.
 */
export function sseParser(provider: ProviderName): Promise<typeof import("eventsource-parser")> {
  return loadParser().catch((cause: unknown) => {
    throw new MissingDependencyError(
      "eventsource-parser",
      `${provider}: eventsource-parser failed to load (${(cause as Error)?.message ?? cause}); nothing was sent. ` +
        "Reinstall sonde, or keep it in your bundle.",
      { provider, cause },
    );
  });
}

/**
 * `readSse`, one array per network read: the messages that read completed, in order
 * (never empty). The hot path: one async step per read instead of one per event.
 */
export async function* readSseBatches(
  response: Response,
  options: SseOptions,
): AsyncGenerator<EventSourceMessage[]> {
  const { provider, idleTimeoutMs, signal } = options;
  const maxEventBytes = options.maxEventBytes ?? 16 * 1024 * 1024;
  if (!response.body) throw new StreamInterruptedError(`${provider}: the stream had no body`, { provider });
  const { createParser } = await sseParser(provider);
  // One timer for the whole stream, no per-event allocation: it records the time of the
  // last byte and, when it fires, re-arms for the remainder unless we have really been
  // waiting for `idleTimeoutMs` with nothing arriving.
  let waiting = false;
  let lastActivity = performance.now();
  let idled = false;
  let parseError: Error | undefined;
  let queue: EventSourceMessage[] = [];
  const parser = createParser({
    onEvent: (message) => {
      queue.push(message);
    },
    onComment: options.onComment,
    maxBufferSize: maxEventBytes,
    onError: (error) => {
      // Unknown fields are legal SSE and ignored; a buffer overflow means a broken stream.
      if (error.type === "max-buffer-size-exceeded") parseError = error;
    },
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
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
      // A slow consumer is not a dead stream: the idle clock starts when we ask for more.
      lastActivity = Math.max(lastActivity, performance.now());
      waiting = true;
      let chunk: ReadableStreamReadResult<Uint8Array>;
      let transportError: unknown;
      try {
        chunk = await reader.read();
      } catch (error) {
        transportError = error;
        chunk = { done: true, value: undefined };
      } finally {
        waiting = false;
      }
      if (idled) {
        throw new StreamInterruptedError(
          `${provider}: no data for ${idleTimeoutMs} ms (not even a keepalive); treating the stream as dropped`,
          { provider },
        );
      }
      if (!chunk.done) {
        lastActivity = performance.now();
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
      // Events queued before an overflow fully arrived: they go out before the error.
      if (queue.length > 0) {
        if (signal?.aborted) throw toTransportError(signal.reason, provider, signal);
        const ready = queue;
        queue = [];
        // The parser bounds what it buffers across reads, not an event that arrives whole
        // inside one read; the limit is on the event, so it is checked here too. The events
        // before an oversized one fully arrived: they go out before the error.
        const oversized = ready.findIndex((message) => message.data.length > maxEventBytes);
        if (oversized >= 0) {
          if (oversized > 0) yield ready.slice(0, oversized);
          throw new StreamInterruptedError(
            `${provider}: an event of ${ready[oversized]!.data.length} characters exceeds the ${maxEventBytes}-character limit; treating the stream as broken`,
            { provider },
          );
        }
        yield ready;
      }
      if (parseError) throw new StreamInterruptedError(`${provider}: ${parseError.message}`, { provider });
      if (chunk.done) {
        if (transportError !== undefined) throw toTransportError(transportError, provider, signal);
        return;
      }
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
