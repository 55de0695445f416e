/**
 * Wire shapes of the OpenAI Responses API (shared/providers/openai-responses.md), as
 * minimal and lenient zod schemas: only the fields Sonde reads, every one optional or
 * nullish, unknown keys kept. Converted to Sonde's events once, in map.ts.
 */
import { z } from "zod";

const str = z.string().nullish();
const int = z.number().nullish();

export const WireUsage = z.looseObject({
  input_tokens: int,
  input_tokens_details: z.looseObject({ cached_tokens: int }).nullish(),
  output_tokens: int,
  output_tokens_details: z.looseObject({ reasoning_tokens: int }).nullish(),
});
export type WireUsage = z.infer<typeof WireUsage>;

export const WireAnnotation = z.looseObject({
  type: z.string(),
  url: str,
  title: str,
  start_index: int,
  end_index: int,
});
export type WireAnnotation = z.infer<typeof WireAnnotation>;

export const WireContentPart = z.looseObject({
  type: z.string(),
  text: str,
  refusal: str,
  annotations: z.array(WireAnnotation).nullish(),
});

/** `web_search_call.action`: absent on `output_item.added`, complete on `.done`. */
export const WireSearchAction = z.looseObject({
  type: str,
  query: str,
  queries: z.array(z.string()).nullish(),
  url: str,
  pattern: str,
});

export const WireItem = z.looseObject({
  id: str,
  type: z.string(),
  status: str,
  // message
  phase: str,
  content: z.array(WireContentPart).nullish(),
  // web_search_call
  action: WireSearchAction.nullish(),
  // file_search_call
  queries: z.array(z.string()).nullish(),
  results: z.unknown().optional(),
  // code_interpreter_call
  code: str,
  container_id: str,
  outputs: z.unknown().optional(),
  // mcp_call / mcp_list_tools
  name: str,
  server_label: str,
  arguments: str,
  output: z.unknown().optional(),
  error: z.unknown().optional(),
  tools: z.unknown().optional(),
  // reasoning
  summary: z.unknown().optional(),
});
export type WireItem = z.infer<typeof WireItem>;

/** The Response object: the POST answer, every poll, and the payload of lifecycle events. */
export const WireResponse = z.looseObject({
  id: z.string().min(1),
  object: str,
  status: str,
  model: str,
  error: z.looseObject({ code: str, message: str }).nullish(),
  incomplete_details: z.looseObject({ reason: str }).nullish(),
  output: z.array(z.unknown()).nullish(),
  usage: WireUsage.nullish(),
});
export type WireResponse = z.infer<typeof WireResponse>;

/** One SSE `data:` payload. Its `type` picks which of the optional fields are set. */
export const WireStreamEvent = z.looseObject({
  type: z.string(),
  sequence_number: int,
  response: z.unknown().optional(),
  item: z.unknown().optional(),
  item_id: str,
  output_index: int,
  content_index: int,
  summary_index: int,
  delta: z.unknown().optional(),
  text: str,
  refusal: str,
  annotation: z.unknown().optional(),
  // `error` events: flat (`code`, `message`) or nested under `error` (both are on the wire).
  code: str,
  message: str,
  error: z.looseObject({ type: str, code: str, message: str }).nullish(),
});
export type WireStreamEvent = z.infer<typeof WireStreamEvent>;

/** An HTTP error body: `{ "error": { "message", "type", "param", "code" } }`. */
export const WireErrorBody = z.looseObject({
  error: z.looseObject({ message: str, type: str, code: str, param: str }).nullish(),
});

export type WireStatus = "queued" | "in_progress" | "completed" | "failed" | "cancelled" | "incomplete";

const terminalStatuses = new Set(["completed", "failed", "cancelled", "incomplete"]);

export function isTerminalWireStatus(status: string | null | undefined): boolean {
  return typeof status === "string" && terminalStatuses.has(status);
}

/** Stream events after which the server sends nothing more for this response. */
export const terminalEventTypes = new Set([
  "response.completed",
  "response.failed",
  "response.incomplete",
  // Not in the SDK union (webhooks have it); accepted if a stream ever carries it.
  "response.cancelled",
  "error",
]);
