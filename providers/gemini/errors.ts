/**
 * Gemini's error bodies and in-stream `error` events name errors several ways: gRPC names
 * (`DEADLINE_EXCEEDED`), lower-case codes (`not_found`), HTTP or gRPC numbers, or a URI
 * (WIRE.md §9). One stable snake_case code comes out, with a sentence on what to do.
 */
import { z } from "zod";
import type { SondeError } from "../../src/errors.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import { errorFromFailure, type HttpFailure } from "../../src/transport/http.js";
import type { WireError } from "./wire.js";

const grpcNames = [
  "ok",
  "cancelled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "already_exists",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "out_of_range",
  "unimplemented",
  "internal",
  "unavailable",
  "data_loss",
  "unauthenticated",
];

const httpNames: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  409: "aborted",
  429: "resource_exhausted",
  500: "internal",
  503: "unavailable",
  504: "deadline_exceeded",
};

const hints: Record<string, string> = {
  deadline_exceeded:
    "Gemini stopped the research at its time limit (a Deep Research run lasts at most 60 minutes). Narrow the question, or continue from this job with previousJobId.",
  resource_exhausted: "The Gemini quota is exhausted; start the job again later or raise the quota.",
  not_found:
    "Gemini no longer has this interaction (stored interactions are kept 55 days on the paid tier, 1 day on the free tier).",
  internal: "A Gemini server error ended the job; start it again.",
  unavailable: "Gemini was unavailable and the job ended; start it again.",
  permission_denied: "Check the Gemini API key and that it may use the Deep Research agents.",
  unauthenticated: "Check the Gemini API key.",
};

/** A stable snake_case code for any of Gemini's spellings. */
export function errorCode(code: string | number | null | undefined, status?: string | null): string {
  if (typeof status === "string" && status) return status.toLowerCase();
  if (typeof code === "number") return httpNames[code] ?? grpcNames[code] ?? `error_${code}`;
  if (typeof code === "string" && code.trim()) {
    const trimmed = code.trim();
    if (/^\d+$/.test(trimmed)) return errorCode(Number(trimmed));
    const last = trimmed.split(/[/#:]/).filter(Boolean).at(-1) ?? trimmed;
    return last
      .replace(/([a-z])([A-Z])/g, "$1_$2")
      .replace(/[^A-Za-z0-9]+/g, "_")
      .toLowerCase();
  }
  return "job_failed";
}

/** Code and message for an `error` event or a failed interaction. */
export function describeError(
  error: WireError | null | undefined,
  fallback: string,
): {
  code: string;
  message: string;
} {
  const code = errorCode(error?.code, error?.status);
  const said = error?.message?.trim() || fallback;
  const hint = hints[code];
  return { code, message: `gemini ${code}: ${said}${hint ? ` ${hint}` : ""}` };
}

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
