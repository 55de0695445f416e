/**
 * Streamed chunks decoded once, into a narrowed type. Nearly every chunk of a stream is
 * a plain content delta: it is recognised by a few property reads (no schema, no
 * copy); every other chunk goes through the `Chunk` schema; what the schema cannot read
 * is `unrecognized` (logged and skipped by the caller, never fatal).
 */
import { LazyWire, STRING, stringAt, stringValue, UINT, UNCOMPILED } from "../../transport/fast-json.js";
import { Annotation, Chunk, type Delta, ReasoningDetail, type UrlCitation } from "./wire.js";

export type DecodedChunk =
  /** Nothing but content: one choice, no finish reason, reasoning, annotations, usage or error. */
  | { kind: "content"; text: string }
  | { kind: "chunk"; chunk: Chunk }
  | { kind: "unrecognized"; issue: string };

interface LooseChunk {
  choices?: unknown;
  usage?: unknown;
  error?: unknown;
  citations?: unknown;
}

interface LooseChoice {
  delta?: Record<string, unknown> | null;
  finish_reason?: unknown;
}

/** The text of a chunk that carries nothing but content; undefined for any other chunk. */
export function plainContent(data: unknown): string | undefined {
  const chunk = data as LooseChunk | null;
  if (!chunk || chunk.usage != null || chunk.error != null || chunk.citations != null) return undefined;
  const choices = chunk.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return undefined;
  const choice = choices[0] as LooseChoice | null;
  const delta = choice?.delta;
  if (choice?.finish_reason != null || !delta || typeof delta.content !== "string") return undefined;
  if (delta.reasoning != null || delta.reasoning_details != null || delta.annotations != null)
    return undefined;
  return delta.content;
}

/**
 * A plain content chunk in the key order OpenAI-compatible servers send (OpenRouter's
 * `provider` and `native_finish_reason` optional), each key at most once: nothing but
 * content, as `plainContent` means it (see src/transport/fast-json.ts).
 */
const CONTENT_CHUNK = new RegExp(
  `^\\{"id":"${STRING}"(?:,"provider":"${STRING}")?,"model":"${STRING}","object":"chat\\.completion\\.chunk",` +
    `"created":(${UINT})(?:,"system_fingerprint":(?:(null)|"${STRING}"))?,"choices":\\[\\{"index":(${UINT}),` +
    `"delta":\\{("role":"assistant",)?"content":"${STRING}"\\},"finish_reason":null` +
    `(,"native_finish_reason":null)?(,"logprobs":null)?\\}\\]\\}$`,
);

/**
 * A plain content chunk read from its `data:` text, without JSON.parse (`event`: its
 * content); undefined for any other.
 */
export function matchContent(data: string): LazyWire<string> | undefined {
  const match = CONTENT_CHUNK.exec(data);
  return match ? new LazyWire(undefined, match, chunkPayload, stringValue(match[13], match[14])) : undefined;
}

/** The payload of a `CONTENT_CHUNK` match, as JSON.parse builds it. */
function chunkPayload(match: RegExpExecArray, content: string): Record<string, unknown> {
  const chunk: Record<string, unknown> = { id: stringAt(match, 1) };
  const provider = stringAt(match, 3);
  if (provider !== undefined) chunk.provider = provider;
  chunk.model = stringAt(match, 5);
  chunk.object = "chat.completion.chunk";
  chunk.created = Number(match[7]);
  if (match[8] !== undefined) chunk.system_fingerprint = null;
  else {
    const fingerprint = stringAt(match, 9);
    if (fingerprint !== undefined) chunk.system_fingerprint = fingerprint;
  }
  const choice: Record<string, unknown> = {
    index: Number(match[11]),
    delta: match[12] !== undefined ? { role: "assistant", content } : { content },
    finish_reason: null,
  };
  if (match[15] !== undefined) choice.native_finish_reason = null;
  if (match[16] !== undefined) choice.logprobs = null;
  chunk.choices = [choice];
  return chunk;
}

/** `plain: false` reads every chunk through the schema (the first chunk's id matters). */
export function decodeChunk(data: unknown, plain = true): DecodedChunk {
  const text = plain ? plainContent(data) : undefined;
  if (text !== undefined) return { kind: "content", text };
  const parsed = Chunk.safeParse(data, UNCOMPILED);
  return parsed.success
    ? { kind: "chunk", chunk: parsed.data }
    : { kind: "unrecognized", issue: parsed.error.message };
}

/** The `url_citation`s of a delta; other annotation types and unreadable ones are skipped. */
export function urlCitationsOf(delta: Delta): UrlCitation[] {
  const out: UrlCitation[] = [];
  for (const raw of delta.annotations ?? []) {
    const annotation = Annotation.safeParse(raw, UNCOMPILED);
    if (annotation.success && annotation.data.type === "url_citation" && annotation.data.url_citation)
      out.push(annotation.data.url_citation);
  }
  return out;
}

/**
 * The reasoning text of a delta. `reasoning` and `reasoning_details` carry the same
 * text: one is taken (details first, as OpenRouter's SDK does; providers/openrouter/WIRE.md §4).
 */
export function reasoningOf(delta: Delta): string {
  let text = "";
  let structured = false;
  for (const raw of delta.reasoning_details ?? []) {
    const detail = ReasoningDetail.safeParse(raw, UNCOMPILED);
    if (!detail.success) continue;
    if (detail.data.type === "reasoning.text" && detail.data.text) text += detail.data.text;
    else if (detail.data.type === "reasoning.summary" && detail.data.summary) text += detail.data.summary;
    else continue;
    structured = true;
  }
  return structured ? text : (delta.reasoning ?? "");
}
