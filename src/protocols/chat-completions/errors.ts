/**
 * The Chat Completions error body, `{ error: { code, message, metadata } }`, before a
 * stream starts (with the real HTTP status), as a 200 JSON body where a stream was
 * expected, and mid-stream as a chunk's top-level `error` (providers/openrouter/WIRE.md §6).
 * `metadata.error_type`, `metadata.reasons`/`flagged_input` (moderation) and
 * `availability` are OpenRouter's; other compatible servers send a subset, which reads
 * the same way. A failed HTTP response is read by http-errors.ts, loaded with the first one.
 */
import { z } from "zod";
import type { EventError, ProviderName } from "../../events.js";

const Availability = z.lazy(() => z.object({ code: z.string().nullish(), retryable: z.boolean().nullish() }));

/** The `error` object of a body or a chunk. */
export const ErrorObject = z.lazy(() =>
  z.object({
    /** Documented as a number (the HTTP status); one doc example shows a string. */
    code: z.union([z.number(), z.string()]).nullish(),
    message: z.string().nullish(),
    metadata: z
      .object({
        error_type: z.string().nullish(),
        provider_code: z.unknown().optional(),
        /** Moderation: why the input was flagged. */
        reasons: z.unknown().optional(),
        flagged_input: z.unknown().optional(),
      })
      .nullish()
      .catch(undefined),
    availability: Availability.nullish().catch(undefined),
  }),
);
export type ErrorObject = z.infer<typeof ErrorObject>;

/** A whole error response body; `availability` sits beside `error` or inside it. */
export const ErrorBody = z.lazy(() =>
  z.object({
    error: ErrorObject.nullish().catch(undefined),
    availability: Availability.nullish().catch(undefined),
  }),
);

/** Mid-stream `error_type`s a fresh request may get past (providers/openrouter/WIRE.md §6). */
const transientErrors = new Set([
  "rate_limit_exceeded",
  "provider_overloaded",
  "provider_unavailable",
  "timeout",
]);

/** A chunk's mid-stream `error` as the job's error event: what arrived before it is kept. */
export function streamErrorOf(error: ErrorObject, provider: ProviderName): EventError {
  const { code, message } = error;
  const type = error.metadata?.error_type ?? undefined;
  return {
    code: type ?? (code !== undefined && code !== null ? String(code) : "provider_error"),
    message:
      `${provider}: ${message ?? "the provider reported an error"} (mid-stream). ` +
      "What arrived before it is kept; a retry restarts the whole request and is billed again.",
    retryable: type !== undefined && transientErrors.has(type),
    ...(typeof code === "number" && { status: code }),
  };
}
