/**
 * Stream events of the Responses protocol as a union keyed by `type`, decoded once where
 * the stream is read (session.ts) so the mapper works on narrowed types. The text and
 * reasoning deltas, nearly every event of a run, get a typeof check and no copy; the
 * rarer events get a lenient zod schema; a type this table does not know, or a payload
 * its schema rejects, decodes to `{ type: "unknown" }` with the wire type kept.
 */
import { z } from "zod";
import { PLAIN, STRING, stringAt, stringValue, UINT, UNCOMPILED } from "../../transport/fast-json.js";
import { WireAnnotation, WireCode, WireError, WireItem, WireResponse } from "./wire.js";

const str = z.string().nullish();
const int = z.number().nullish();
/** A nested payload that does not parse is dropped, not the whole event. */
const lenient = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

const base = { sequence_number: int };
const lifecycle = z.looseObject({ ...base, response: lenient(WireResponse) });
const terminal = z.looseObject({
  ...base,
  response: lenient(WireResponse),
  // Perplexity's `response.failed` has its error at the top level (providers/perplexity/WIRE.md §4).
  error: lenient(WireError.nullable()),
});
const itemEvent = z.looseObject({ ...base, output_index: int, item: lenient(WireItem) });
const textPart = { ...base, item_id: str, output_index: int, content_index: int };

const schemas = {
  "response.created": lifecycle,
  "response.queued": lifecycle,
  "response.in_progress": lifecycle,
  "response.completed": terminal,
  "response.failed": terminal,
  "response.incomplete": terminal,
  "response.cancelled": terminal,
  // Flat (`code`, `message`) or nested under `error`: both are on the wire.
  error: z.looseObject({ ...base, code: WireCode, message: str, error: lenient(WireError.nullable()) }),
  "response.output_item.added": itemEvent,
  "response.output_item.done": itemEvent,
  "response.content_part.added": z.looseObject({
    ...textPart,
    part: lenient(z.looseObject({ type: str })),
  }),
  "response.output_text.annotation.added": z.looseObject({
    ...textPart,
    annotation: lenient(WireAnnotation),
  }),
  "response.output_text.done": z.looseObject({ ...textPart, text: str }),
  "response.refusal.done": z.looseObject({ ...textPart, refusal: str }),
  // Perplexity's reasoning trace: free text tied to no item (providers/perplexity/WIRE.md §4).
  "response.reasoning.started": z.looseObject({ ...base, thought: str }),
  "response.reasoning.stopped": z.looseObject({ ...base, thought: str }),
  "response.reasoning.search_queries": z.looseObject({
    ...base,
    thought: str,
    queries: lenient(z.array(z.string())),
  }),
  "response.reasoning.search_results": z.looseObject({ ...base, thought: str, results: z.unknown() }),
  "response.reasoning.fetch_url_queries": z.looseObject({
    ...base,
    thought: str,
    urls: lenient(z.array(z.string())),
  }),
  "response.reasoning.fetch_url_results": z.looseObject({ ...base, thought: str, contents: z.unknown() }),
} as const;

type Schemas = typeof schemas;
type Decoded<K extends keyof Schemas> = z.infer<Schemas[K]> & { type: K };

/** `response.output_text.delta`: checked by hand, the hot path. */
export interface TextDelta {
  type: "response.output_text.delta";
  sequence_number?: number | null;
  item_id?: string | null;
  output_index?: number | null;
  content_index?: number | null;
  delta: string;
  logprobs?: unknown[];
  obfuscation?: string;
}

/** `response.reasoning_summary_text.delta` (OpenAI): checked by hand, the other frequent delta. */
export interface SummaryDelta {
  type: "response.reasoning_summary_text.delta";
  sequence_number?: number | null;
  item_id?: string | null;
  summary_index?: number | null;
  delta: string;
}

/** Any event whose type is not modelled here, or whose payload did not parse. */
export interface UnknownEvent {
  type: "unknown";
  wireType: string;
  sequence_number?: number | null;
}

export type StreamEvent =
  | { [K in keyof Schemas]: Decoded<K> }[keyof Schemas]
  | TextDelta
  | SummaryDelta
  | UnknownEvent;
export type StreamEventOf<T extends StreamEvent["type"]> = Extract<StreamEvent, { type: T }>;

/** The Response a lifecycle or terminal event carries. */
export function responseOf(event: StreamEvent): WireResponse | undefined {
  const response = (event as { response?: unknown }).response;
  return response && typeof response === "object" ? (response as WireResponse) : undefined;
}

const optionalString = (value: unknown) => value === undefined || value === null || typeof value === "string";
const optionalNumber = (value: unknown) => value === undefined || value === null || typeof value === "number";

/** The cheap check: the fields the mapper reads have the right primitive types. */
function isDelta(data: Record<string, unknown>, index: "content_index" | "summary_index"): boolean {
  return (
    typeof data.delta === "string" &&
    optionalString(data.item_id) &&
    optionalNumber(data[index]) &&
    optionalNumber(data.sequence_number)
  );
}

/** One SSE `data:` payload (already JSON-parsed) as a typed event; undefined when it is not an event object. */
export function decodeStreamEvent(data: unknown): StreamEvent | undefined {
  if (!data || typeof data !== "object") return undefined;
  const record = data as Record<string, unknown>;
  const type = record.type;
  if (typeof type !== "string") return undefined;
  const sequence = typeof record.sequence_number === "number" ? record.sequence_number : undefined;
  // The hot path: no schema, no copy (the raw object is the event).
  if (type === "response.output_text.delta") {
    if (isDelta(record, "content_index")) return record as unknown as TextDelta;
  } else if (type === "response.reasoning_summary_text.delta") {
    if (isDelta(record, "summary_index")) return record as unknown as SummaryDelta;
  } else if (Object.hasOwn(schemas, type)) {
    const parsed = schemas[type as keyof Schemas].safeParse(record, UNCOMPILED);
    if (parsed.success) return { ...parsed.data, type } as StreamEvent;
  }
  return { type: "unknown", wireType: type, sequence_number: sequence };
}

/**
 * A plain `response.output_text.delta` as real streams send it (OpenAI, and Perplexity with
 * no `logprobs` or `obfuscation`): `sequence_number` after `type` or last (both: the last
 * wins, as in JSON.parse).
 */
const TEXT_DELTA = new RegExp(
  `^\\{"type":"response\\.output_text\\.delta"(?:,"sequence_number":(${UINT}))?,"item_id":"(${PLAIN})",` +
    `"output_index":(${UINT}),"content_index":(${UINT}),"delta":"${STRING}"` +
    `(,"logprobs":\\[\\])?(?:,"obfuscation":"${STRING}")?(?:,"sequence_number":(${UINT}))?\\}$`,
);

/** A plain text delta as the wire event the session hands on (see `textDeltaOf`). */
export type MatchedDelta = { cursor: string | undefined; data: TextDelta; event: TextDelta };

/**
 * `TEXT_DELTA`'s match of a `data:` text (see fast-json.ts), or null for anything but a plain
 * text delta: read without building the event yet (delta-run.ts reads only its text).
 */
export function execTextDelta(text: string): RegExpExecArray | null {
  return TEXT_DELTA.exec(text);
}

/** Two matches are of one content part: the same `item_id`, `output_index` and `content_index` as sent. */
export const sameDeltaPart = (a: RegExpExecArray, b: RegExpExecArray) =>
  a[2] === b[2] && a[3] === b[3] && a[4] === b[4];
/** A match's cursor (its `sequence_number` as sent) and text. */
export const deltaCursorOf = (match: RegExpExecArray): string | undefined => match[10] ?? match[1];
export const deltaTextOf = (match: RegExpExecArray): string => stringValue(match[5], match[6]);

/**
 * The wire event of a `TEXT_DELTA` match, as the session hands it on: its cursor is the
 * `sequence_number` digits as sent (what `String(sequence_number)` gives for them). The
 * payload is built key for key as JSON.parse builds it (a repeated key keeps its first place
 * and its last value), and is the decoded event too, as on the general path.
 */
export function textDeltaOf(match: RegExpExecArray): MatchedDelta {
  const sequence = match[10] ?? match[1];
  const type = "response.output_text.delta";
  const itemId = match[2];
  const outputIndex = Number(match[3]);
  const contentIndex = Number(match[4]);
  const delta = stringValue(match[5], match[6]);
  const payload: TextDelta =
    match[1] !== undefined
      ? {
          type,
          sequence_number: Number(sequence),
          item_id: itemId,
          output_index: outputIndex,
          content_index: contentIndex,
          delta,
        }
      : { type, item_id: itemId, output_index: outputIndex, content_index: contentIndex, delta };
  if (match[7] !== undefined) payload.logprobs = [];
  const obfuscation = stringAt(match, 8);
  if (obfuscation !== undefined) payload.obfuscation = obfuscation;
  if (match[1] === undefined && match[10] !== undefined) payload.sequence_number = Number(match[10]);
  return { cursor: sequence, data: payload, event: payload };
}
