import type { ResearchResult } from "./aggregate.js";
import type { ProviderName } from "./events.js";
import { redact } from "./redact.js";

/**
 * Every value `SondeError.code` can take: a closed set, so a `switch` over it is checked
 * for exhaustiveness. A provider's own code never appears here; it is kept in `providerCode`.
 */
export const sondeErrorCodes = [
  // The request, refused before anything was sent (or by the provider as malformed).
  "invalid_request",
  "unknown_model",
  "model_retired",
  "model_unavailable",
  "unsupported_option",
  "unsupported_adapter",
  "invalid_ref",
  "ref_ownership",
  "idempotency_conflict",
  "missing_dependency",
  "invalid_webhook_signature",
  // The account.
  "authentication",
  "insufficient_credit",
  "rate_limit",
  // The provider and the job it runs.
  "provider_unavailable",
  "job_failed",
  "job_not_found",
  // The connection.
  "connection_failed",
  "stream_interrupted",
  "indeterminate_submission",
  // The local job object.
  "aborted",
  "timeout",
  "stream_consumed",
  "job_not_created",
  // The portable engine's job store and runner.
  "store_error",
  "lease_lost",
  "halted",
] as const;

/** The stable, machine-readable `code` of a `SondeError`; see `sondeErrorCodes`. */
export type SondeErrorCode = (typeof sondeErrorCodes)[number];

/** The codes an `InvalidRequestError` (or a subclass) carries. */
export type InvalidRequestCode =
  | "invalid_request"
  | "unknown_model"
  | "model_retired"
  | "model_unavailable"
  | "unsupported_option";

/** The codes a `ProviderJobError` carries: the job failed, or the portable engine's store or runner did. */
export type ProviderJobErrorCode = "job_failed" | "store_error" | "lease_lost" | "halted";

const MARK = Symbol.for("sonde.error");

/**
 * Keeps a cause's name, message and chain but not its other properties: transport
 * errors carry the Request (with its Authorization header) and the Response.
 */
function sanitizeCause(cause: unknown, depth = 0): unknown {
  if (SondeErrorMarked(cause)) return cause;
  if (!(cause instanceof Error)) return typeof cause === "string" ? redact(cause) : undefined;
  const inner = depth < 3 && cause.cause !== undefined ? sanitizeCause(cause.cause, depth + 1) : undefined;
  const copy = new Error(redact(cause.message), inner === undefined ? undefined : { cause: inner });
  copy.name = cause.name;
  copy.stack = redact(cause.stack ?? "");
  return copy;
}

function SondeErrorMarked(value: unknown): boolean {
  return Boolean(value && typeof value === "object" && MARK in value);
}

export interface SondeErrorOptions {
  retryable?: boolean;
  provider?: ProviderName;
  status?: number;
  requestId?: string;
  /** The provider's own error code (`insufficient_quota`, `DEADLINE_EXCEEDED`, ...), as it sent it. */
  providerCode?: string | undefined;
  cause?: unknown;
}

/**
 * Base of every error Sonde throws. `code` is stable and machine-readable (one of
 * `sondeErrorCodes`, so `switch (error.code)` is exhaustive); the provider's own code, when
 * it sent one, is `providerCode`. `retryable` says whether the same call may succeed later.
 * Messages are redacted: no API key ever appears in one.
 *
 * Use `XError.isInstance(e)` rather than `instanceof` when two copies of the package
 * may be loaded (it compares a global marker and class names, not prototypes).
 */
export class SondeError extends Error {
  /** Stable class name (bundlers may rename classes; this survives). */
  static readonly errorName: string = "SondeError";
  readonly code: SondeErrorCode;
  readonly retryable: boolean;
  readonly provider?: ProviderName;
  readonly status?: number;
  readonly requestId?: string;
  /** The provider's own code for this failure (e.g. `insufficient_quota`), when it sent one. */
  readonly providerCode?: string;
  /**
   * For an error a job's `result()` rejects with: everything the job had produced (report so
   * far, citations, usage, gaps). Unset on errors thrown before a job existed.
   */
  partial?: ResearchResult;
  declare readonly [MARK]: readonly string[];

  constructor(code: SondeErrorCode, message: string, options: SondeErrorOptions = {}) {
    super(redact(message), options.cause === undefined ? undefined : { cause: sanitizeCause(options.cause) });
    this.code = code;
    this.retryable = options.retryable ?? false;
    if (options.provider) this.provider = options.provider;
    if (options.status !== undefined) this.status = options.status;
    if (options.requestId) this.requestId = redact(options.requestId);
    if (options.providerCode) this.providerCode = redact(options.providerCode);
    if (this.stack) this.stack = redact(this.stack);
    // Class names along the prototype chain, for cross-realm `isInstance`.
    const names: string[] = [];
    for (
      let proto = Object.getPrototypeOf(this);
      proto && proto !== Error.prototype;
      proto = Object.getPrototypeOf(proto)
    ) {
      names.push((proto.constructor as typeof SondeError).errorName);
    }
    Object.defineProperty(this, MARK, { value: names, enumerable: false });
    Object.defineProperty(this, "name", { value: names[0] ?? "SondeError", enumerable: false });
  }

  /** True for an instance of this class (or a subclass), even from another copy of Sonde. */
  static isInstance<T extends (abstract new (...args: never[]) => SondeError) & { errorName: string }>(
    this: T,
    value: unknown,
  ): value is InstanceType<T> {
    if (!value || typeof value !== "object") return false;
    const names = (value as { [MARK]?: readonly string[] })[MARK];
    return Array.isArray(names) && names.includes(this.errorName);
  }

  /** A JSON form that is safe to log: no cause chain, no raw payloads. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      providerCode: this.providerCode,
      message: this.message,
      retryable: this.retryable,
      provider: this.provider,
      status: this.status,
      requestId: this.requestId,
    };
  }
}

/** The request is malformed. Thrown by `validate()`/`start()` before any network call. */
export class InvalidRequestError extends SondeError {
  static override readonly errorName: string = "InvalidRequestError";
  constructor(message: string, options: SondeErrorOptions & { code?: InvalidRequestCode } = {}) {
    super(options.code ?? "invalid_request", message, options);
  }
}

/** The model id is not in the catalog. `suggestions` holds the closest known ids. */
export class UnknownModelError extends InvalidRequestError {
  static override readonly errorName: string = "UnknownModelError";
  readonly model: string;
  readonly suggestions: string[];
  constructor(model: string, suggestions: string[]) {
    const hint = suggestions.length ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(", ")}?` : "";
    super(`Unknown model "${model}".${hint} Run \`sonde models\` or research.listModels() for the list.`, {
      code: "unknown_model",
    });
    this.model = model;
    this.suggestions = suggestions;
  }
}

/** The model was shut down (per the catalog and the client's clock). Names the replacement. */
export class ModelRetiredError extends InvalidRequestError {
  static override readonly errorName: string = "ModelRetiredError";
  readonly model: string;
  readonly shutdownAt: string | undefined;
  readonly replacement: string | undefined;
  constructor(model: string, shutdownAt: string | undefined, replacement: string | undefined) {
    const when = shutdownAt ? ` on ${shutdownAt.slice(0, 10)}` : "";
    const use = replacement ? ` Use "${replacement}" instead.` : "";
    super(`Model "${model}" was retired${when}.${use}`, { code: "model_retired" });
    this.model = model;
    this.shutdownAt = shutdownAt;
    this.replacement = replacement;
  }
}

/**
 * The provider no longer serves the model (OpenRouter's "no endpoints"), though the catalog
 * still lists it. `alternatives` are catalog ids that do the same work.
 */
export class ModelUnavailableError extends InvalidRequestError {
  static override readonly errorName: string = "ModelUnavailableError";
  readonly model: string;
  readonly alternatives: string[];
  constructor(model: string, alternatives: string[], message: string, options: SondeErrorOptions = {}) {
    const use = alternatives.length
      ? ` Use ${alternatives.map((id) => `"${id}"`).join(" or ")} instead.`
      : "";
    super(`${message}${use}`, { ...options, code: "model_unavailable", retryable: false });
    this.model = model;
    this.alternatives = alternatives;
  }
}

/**
 * An adapter given to `createSonde` (or `new Sonde()`) implements another version of the
 * adapter spec than this Sonde: `specVersion` is what it declared, `provider` what it runs.
 * Thrown when the client is made, before any job.
 */
export class UnsupportedAdapterError extends SondeError {
  static override readonly errorName: string = "UnsupportedAdapterError";
  readonly specVersion: unknown;
  constructor(provider: string, specVersion: unknown, supported: number) {
    super(
      "unsupported_adapter",
      `The adapter for "${provider}" implements adapter spec ${String(specVersion)}; this Sonde runs version ${supported}: use releases that match.`,
      { retryable: false },
    );
    this.specVersion = specVersion;
  }
}

/** The engine cannot honour an option of the request; it is rejected, never dropped. */
export class UnsupportedOptionError extends InvalidRequestError {
  static override readonly errorName: string = "UnsupportedOptionError";
  readonly option: string;
  constructor(option: string, message: string, options: SondeErrorOptions = {}) {
    super(message, { ...options, code: "unsupported_option" });
    this.option = option;
  }
}

/**
 * 401/403: the key is missing, wrong, or lacks access. For a missing key, `envVar` names the
 * environment variable it is read from.
 */
export class AuthenticationError extends SondeError {
  static override readonly errorName: string = "AuthenticationError";
  readonly envVar: string | undefined;
  constructor(message: string, options: SondeErrorOptions & { envVar?: string } = {}) {
    super("authentication", message, { ...options, retryable: false });
    this.envVar = options.envVar;
  }
}

/** 402: the account has no credit left for this job. */
export class InsufficientCreditError extends SondeError {
  static override readonly errorName: string = "InsufficientCreditError";
  constructor(message: string, options: SondeErrorOptions = {}) {
    super("insufficient_credit", message, { ...options, retryable: false });
  }
}

/** 429: too many requests (or jobs in flight). `retryAfterMs` is from `Retry-After` when sent. */
export class RateLimitError extends SondeError {
  static override readonly errorName: string = "RateLimitError";
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: SondeErrorOptions & { retryAfterMs?: number } = {}) {
    super("rate_limit", message, { retryable: true, ...options });
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** 5xx, or the provider said it is overloaded. Usually retryable. */
export class ProviderUnavailableError extends SondeError {
  static override readonly errorName: string = "ProviderUnavailableError";
  readonly retryAfterMs: number | undefined;
  constructor(message: string, options: SondeErrorOptions & { retryAfterMs?: number } = {}) {
    super("provider_unavailable", message, { retryable: true, ...options });
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The provider reported that the job itself failed (an in-stream error, a `failed` status):
 * `code` is `job_failed` and `providerCode` is what the provider called it. The portable
 * engine also uses it for its store (`store_error`, `lease_lost`) and runner (`halted`).
 */
export class ProviderJobError extends SondeError {
  static override readonly errorName: string = "ProviderJobError";
  constructor(code: ProviderJobErrorCode, message: string, options: SondeErrorOptions = {}) {
    super(code, message, options);
  }
}

/**
 * The connection dropped (reset, truncated, idle past `idleTimeoutMs`) and could not
 * be resumed. `partial` holds everything received before the drop.
 */
export class StreamInterruptedError extends SondeError {
  static override readonly errorName: string = "StreamInterruptedError";
  constructor(message: string, options: SondeErrorOptions = {}) {
    super("stream_interrupted", message, { retryable: true, ...options });
  }
}

/**
 * The request never left this machine: the connection was refused, the host name did not
 * resolve, or the TLS handshake failed before any byte of the request was written. Nothing
 * reached the provider, so even a job-creating request is retried under the retry policy.
 * `networkCode` is the system's code (`ECONNREFUSED`, `ENOTFOUND`, `ERR_SSL_WRONG_VERSION_NUMBER`, ...).
 */
export class ConnectionError extends SondeError {
  static override readonly errorName: string = "ConnectionError";
  readonly networkCode: string;
  constructor(message: string, options: SondeErrorOptions & { networkCode: string }) {
    super("connection_failed", message, { retryable: true, ...options });
    this.networkCode = options.networkCode;
  }
}

/** The provider does not know this job id (expired, deleted, or another account). */
export class JobNotFoundError extends SondeError {
  static override readonly errorName: string = "JobNotFoundError";
  constructor(message: string, options: SondeErrorOptions = {}) {
    super("job_not_found", message, { ...options, retryable: false });
  }
}

/** A ref passed to `attach`/`get`/`cancel` is not a valid Sonde ref. `field` names what is wrong. */
export class InvalidRefError extends SondeError {
  static override readonly errorName: string = "InvalidRefError";
  readonly field: string;
  constructor(field: string, message: string) {
    super("invalid_ref", message);
    this.field = field;
  }
}

/**
 * A ref was created under another credential or `owner` than the client reading it
 * (`attach`/`get`/`cancel`), so Sonde refused it before any request. `field` is
 * `"credential"` or `"owner"`. A rotated key is accepted only when listed explicitly.
 */
export class RefOwnershipError extends SondeError {
  static override readonly errorName: string = "RefOwnershipError";
  readonly field: "credential" | "owner";
  constructor(field: "credential" | "owner", message: string, options: SondeErrorOptions = {}) {
    super("ref_ownership", message, { ...options, retryable: false });
    this.field = field;
  }
}

/** An optional peer package an entry needs is not installed; the message says what to install. */
export class MissingDependencyError extends SondeError {
  static override readonly errorName: string = "MissingDependencyError";
  readonly packageName: string;
  constructor(packageName: string, message: string, options: SondeErrorOptions = {}) {
    super("missing_dependency", message, { ...options, retryable: false });
    this.packageName = packageName;
  }
}

/** The same `idempotencyKey` was used with a different request. */
export class IdempotencyConflictError extends SondeError {
  static override readonly errorName: string = "IdempotencyConflictError";
  constructor(message: string, options: SondeErrorOptions = {}) {
    super("idempotency_conflict", message, { ...options, retryable: false });
  }
}

/**
 * The job-creating request may or may not have reached the provider (timeout or drop
 * before a response). Sonde does not resend it, because that can start and bill a
 * second job. `jobId` is set when anything identified the job.
 */
export class IndeterminateSubmissionError extends SondeError {
  static override readonly errorName: string = "IndeterminateSubmissionError";
  readonly jobId: string | undefined;
  constructor(message: string, options: SondeErrorOptions & { jobId?: string } = {}) {
    super("indeterminate_submission", message, { ...options, retryable: false });
    this.jobId = options.jobId;
  }
}

/** A job's event stream was iterated a second time. Use `result()` or keep the events. */
export class StreamConsumedError extends SondeError {
  static override readonly errorName: string = "StreamConsumedError";
  constructor() {
    super(
      "stream_consumed",
      "This job's events were already iterated; a job streams once. Await job.result() instead.",
    );
  }
}

/** `toRef()` was called before the provider assigned a job id (before the `created` event). */
export class JobNotCreatedError extends SondeError {
  static override readonly errorName: string = "JobNotCreatedError";
  constructor() {
    super(
      "job_not_created",
      "The job has no id yet: call toRef() after the `created` event (or after `await job.created()`).",
    );
  }
}

/**
 * Where a job stood when its local object stopped, which decides what is true about it:
 * `never-sent` (aborted before anything was sent: no job exists), `unconfirmed` (aborted
 * while being submitted), `remote` (the provider's job keeps running), `local` (a portable
 * job keeps running in this process), `local-paused` (a portable job paused by `detach()`).
 */
export type AbortedJobState = "never-sent" | "unconfirmed" | "remote" | "local" | "local-paused";

const abortedJob: Record<AbortedJobState, string> = {
  "never-sent": "Nothing was sent: no job was created.",
  unconfirmed: "It was aborted during its submission, before an id arrived: it may or may not exist.",
  remote: "The remote job keeps running; attach its ref to continue or cancel it.",
  local:
    "The local job keeps running in this process: job.detach() pauses it (progress saved) so the process can exit, " +
    "job.cancel() stops it; attach its ref to follow it again.",
  "local-paused":
    "The local job is paused, its progress saved: attach its ref (in any process) to continue or cancel it.",
};

/**
 * The local job object stopped: `abort()`, `detach()`, the request's `signal`, or `timeoutMs`.
 * The job was not cancelled; `jobState` (and the message) says what is true of it.
 */
export class JobAbortedError extends SondeError {
  static override readonly errorName: string = "JobAbortedError";
  readonly reason: unknown;
  readonly jobState: AbortedJobState;
  constructor(kind: "aborted" | "timeout", reason?: unknown, jobState: AbortedJobState = "remote") {
    super(
      kind,
      `${kind === "timeout" ? "The job's timeoutMs elapsed." : "The job was aborted locally."} ${abortedJob[jobState]}`,
    );
    this.reason = reason;
    this.jobState = jobState;
  }
}

/**
 * The typed error for a failure the provider reported inside the job (an `error`
 * event) rather than as an HTTP status: quota, rate and auth codes get their own
 * classes, anything else is a `ProviderJobError` (`job_failed`) carrying the provider's code
 * as `providerCode`.
 * @example
 * ```ts
 * import { errorFromReport } from "sonde";
 *
 * const error = errorFromReport("openai", { code: "insufficient_quota", message: "You exceeded your quota" });
 * error.code; // "insufficient_credit" (an InsufficientCreditError); error.providerCode: "insufficient_quota"
 * ```
 */
export function errorFromReport(
  provider: ProviderName,
  report: { code: string; message: string; status?: number | undefined },
): SondeError {
  const code = report.code.toLowerCase();
  const options = {
    provider,
    providerCode: report.code,
    ...(report.status !== undefined && { status: report.status }),
  };
  const message = `${provider}: ${report.message} (${report.code})`;
  if (report.status === 402 || /insufficient_quota|insufficient_credit|billing|payment_required/.test(code)) {
    return new InsufficientCreditError(message, options);
  }
  if (report.status === 429 || /rate_limit|resource_exhausted|too_many_requests/.test(code)) {
    return new RateLimitError(message, options);
  }
  if (
    report.status === 401 ||
    report.status === 403 ||
    /invalid_api_key|unauthenticated|permission_denied|unauthorized/.test(code)
  ) {
    return new AuthenticationError(message, options);
  }
  return new ProviderJobError("job_failed", report.message, options);
}
