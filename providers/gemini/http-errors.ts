/**
 * Gemini's readings of a failed HTTP response beyond its status (WIRE.md §9), loaded with the
 * first failure: Google's error envelope, its gRPC name and `RetryInfo`.
 */
import { z } from "zod";
import type { SondeError } from "../../src/errors.js";
import { errorFromFailure } from "../../src/transport/error-body.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import type { HttpFailure } from "../../src/transport/http.js";

/** A `google.rpc.RetryInfo` detail: `retryDelay` is a duration such as `"34.4s"`. */
const RetryInfo = z.lazy(() => z.looseObject({ retryDelay: z.string().regex(/^\d+(\.\d+)?s$/) }));

/**
 * Google's HTTP error envelope (WIRE.md §9), read leniently: a field of an unexpected type is
 * dropped, so an odd body still gets the status-code mapping.
 */
export const ErrorBody = z.lazy(() =>
  z.looseObject({
    error: z
      .looseObject({
        code: z.union([z.string(), z.number()]).nullish().catch(undefined),
        message: z.string().nullish().catch(undefined),
        status: z.string().nullish().catch(undefined),
        details: z.array(z.unknown()).nullish().catch(undefined),
      })
      .nullish()
      .catch(undefined),
  }),
);

/** Parses the first `RetryInfo` detail's delay into milliseconds. */
function retryDelayMs(details: readonly unknown[] | null | undefined): number | undefined {
  for (const detail of details ?? []) {
    const info = RetryInfo.safeParse(detail, UNCOMPILED);
    if (info.success) return Math.ceil(Number.parseFloat(info.data.retryDelay) * 1000);
  }
  return undefined;
}

/**
 * The `classify` hook for Gemini's HTTP errors: Google's envelope
 * `{"error":{"code":429,"message","status":"RESOURCE_EXHAUSTED","details":[RetryInfo]}}`.
 * Status codes decide the class; the gRPC name becomes the `providerCode`, and
 * `retryDelay` stands in for a missing `Retry-After`. The gRPC name (or the body's code) is
 * kept as the error's `providerCode`.
 */
export function classifyFailure(failure: HttpFailure): SondeError {
  const parsed = ErrorBody.safeParse(failure.body, UNCOMPILED);
  const inner = parsed.success ? parsed.data.error : undefined;
  const status = inner?.status || undefined;
  return errorFromFailure({
    ...failure,
    retryAfterMs: failure.retryAfterMs ?? retryDelayMs(inner?.details),
    code: status ? status.toLowerCase() : failure.code,
  });
}
