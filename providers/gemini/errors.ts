/**
 * Gemini's error bodies and in-stream `error` events name errors several ways: gRPC names
 * (`DEADLINE_EXCEEDED`), lower-case codes (`not_found`), HTTP or gRPC numbers, or a URI
 * (WIRE.md §9). One stable snake_case code comes out, with a sentence on what to do.
 */
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
