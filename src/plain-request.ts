import { plainFields } from "./plain-object.js";
import type { ParsedRequest } from "./request.js";

type Check = (value: unknown) => boolean;
const isString: Check = (value) => typeof value === "string";
const nonEmpty: Check = (value) => isString(value) && (value as string).length > 0;
/** `z.number().int().positive()`: zod's int is a safe integer. */
const positiveInt: Check = (value) => Number.isSafeInteger(value) && (value as number) > 0;

/**
 * The keys a plain request may have, each with the check the schema makes of a value other than
 * undefined, in the schema's order (zod's output lists the present keys in that order). The
 * portable engine's options (`idempotencyKey`, `sources`, `budget`) go to the schema.
 */
const PLAIN: Readonly<Record<string, Check>> = {
  model: nonEmpty,
  query: isString, // and non-empty once trimmed: below
  instructions: isString,
  output: nonEmpty,
  maxToolCalls: positiveInt,
  previousJobId: nonEmpty,
  timeoutMs: positiveInt,
};

/**
 * The common request (a model, a query and plain options: strings and numbers) checked by
 * hand, with the result `ResearchRequest.parse` gives (the query trimmed, the present keys in
 * the schema's order). zod builds the request schema on its first use, which was 5–7 ms of a
 * process's first `start()`. Anything else (another option, an invalid value, an object that is
 * not a plain one) returns undefined: the schema decides, and words the error.
 * test/core/plain-request.test.ts compares the two on generated input.
 */
export function plainRequest(input: unknown): ParsedRequest | undefined {
  const record = plainFields(input);
  if (!record) return undefined;
  // Each field read once, as zod reads it (a getter is not asked twice).
  const values: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (!Object.hasOwn(PLAIN, key) || (value !== undefined && !PLAIN[key]!(value))) return undefined;
    values[key] = value;
  }
  const query = typeof values.query === "string" ? values.query.trim() : "";
  if (query === "" || values.model === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(PLAIN))
    if (Object.hasOwn(values, key)) out[key] = key === "query" ? query : values[key];
  return out as ParsedRequest;
}
