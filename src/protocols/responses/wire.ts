/**
 * Wire shapes of the Responses protocol, as OpenAI (providers/openai/WIRE.md)
 * and Perplexity's Agent API (providers/perplexity/WIRE.md) speak it: minimal and lenient zod
 * schemas, only the fields Sonde reads, every one optional or nullish, unknown keys kept.
 * Stream events are in events.ts.
 */
import { z } from "zod";
import { UNCOMPILED } from "../../transport/fast-json.js";

const str = z.string().nullish();
const int = z.number().nullish();
/** Error codes: strings at OpenAI, integers in Perplexity's live bodies (providers/perplexity/WIRE.md §8). */
export const WireCode = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((code) => (code === null || code === undefined ? code : String(code)));

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

/** One search hit (Perplexity's `search_results` items and `response.reasoning.search_results`). */
export const WireSearchResult = z.looseObject({
  id: int,
  url: z.string(),
  title: str,
  snippet: str,
  date: str,
});
export type WireSearchResult = z.infer<typeof WireSearchResult>;

/** A page read (Perplexity's `fetch_url_results` items and events): no id. */
export const WireFetchedPage = z.looseObject({ url: z.string(), title: str, snippet: str });

export const WireItem = z.looseObject({
  id: str,
  type: z.string(),
  status: str,
  // message
  phase: str,
  content: z.array(WireContentPart).nullish(),
  // web_search_call
  action: WireSearchAction.nullish(),
  // file_search_call, search_results
  queries: z.array(z.string()).nullish(),
  results: z.unknown().optional(),
  // fetch_url_results
  contents: z.unknown().optional(),
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

export const WireError = z.looseObject({ type: str, code: WireCode, message: str });
export type WireError = z.infer<typeof WireError>;

/** The Response object: the POST answer, every poll, and the payload of lifecycle events. */
export const WireResponse = z.looseObject({
  id: z.string().min(1),
  object: str,
  status: str,
  model: str,
  error: WireError.nullish(),
  incomplete_details: z.looseObject({ reason: str }).nullish(),
  output: z.array(z.unknown()).nullish(),
  usage: WireUsage.nullish(),
});
export type WireResponse = z.infer<typeof WireResponse>;

export function parseItem(value: unknown): WireItem | undefined {
  const parsed = WireItem.safeParse(value, UNCOMPILED);
  return parsed.success ? parsed.data : undefined;
}

/** The search hits of a `search_results` item or event, the unreadable ones left out. */
export function searchResultsOf(value: unknown): WireSearchResult[] {
  if (!Array.isArray(value)) return [];
  const out: WireSearchResult[] = [];
  for (const raw of value) {
    const parsed = WireSearchResult.safeParse(raw, UNCOMPILED);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

/** The pages of a `fetch_url_results` item or event. */
export function fetchedPagesOf(value: unknown): z.infer<typeof WireFetchedPage>[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((raw) => {
    const parsed = WireFetchedPage.safeParse(raw, UNCOMPILED);
    return parsed.success ? [parsed.data] : [];
  });
}
