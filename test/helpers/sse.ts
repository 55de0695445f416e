/**
 * Server-Sent Events text for tests, in one place: framing events the way each provider
 * writes them, splitting a recorded transcript into its events, and reading their `data:`
 * payloads back. Transcripts themselves live in test/fixtures/<provider>/.
 */
export interface Framing {
  /** The `event:` line's name for an event; none when it returns undefined (bare `data:` lines). */
  name?: (event: Record<string, unknown>) => string | undefined;
  /** End with `data: [DONE]` (OpenRouter, Gemini). */
  done?: boolean;
}

/** How each provider frames its stream (test/fixtures/<provider>/*.sse show the real thing). */
export const framing = {
  /** `event: <type>` then `data:` (Responses API). */
  openai: { name: (event) => String(event.type) },
  /** `event: <event_type>` then `data:`, closed by `data: [DONE]`. */
  gemini: { name: (event) => String(event.event_type), done: true },
  /** Bare `data:` lines numbered by `sequence_number`. */
  perplexity: {},
  /** Bare `data:` chunks, closed by `data: [DONE]`. */
  openrouter: { done: true },
} satisfies Record<string, Framing>;

/** One event as the server writes it, blank line included. */
export function sseEvent(event: unknown, name?: string): string {
  return `${name ? `event: ${name}\n` : ""}data: ${JSON.stringify(event)}\n\n`;
}

/** A whole stream body from its events. */
export function sseText(events: readonly Record<string, unknown>[], frame: Framing = {}): string {
  const body = events.map((event) => sseEvent(event, frame.name?.(event))).join("");
  return frame.done ? `${body}data: [DONE]\n\n` : body;
}

/** A transcript split into its blocks (events and `:` keepalive comments), each with its blank line. */
export function sseBlocks(text: string): string[] {
  return text.split(/(?<=\n\n)/).filter((block) => block.trim() !== "");
}

/** The JSON `data:` payloads of a transcript, in order; `[DONE]` is skipped unless `keepDone`. */
export function sseData<T = Record<string, unknown>>(
  text: string,
  options: { keepDone?: boolean } = {},
): T[] {
  return sseBlocks(text)
    .map((block) =>
      block
        .split("\n")
        .find((line) => line.startsWith("data: "))
        ?.slice(6),
    )
    .filter((data): data is string => data !== undefined && (options.keepDone === true || data !== "[DONE]"))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)) as T);
}
