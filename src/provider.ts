/**
 * The engine spec: what a provider adapter implements. An adapter only maps a wire
 * format onto this; ordering, `seq`, dedup by cursor, exactly-once delivery across
 * reconnects and attach, timeouts, retries and aggregation live once, in the core
 * (`job.ts`). Versioned by `specVersion` so adapters written elsewhere can be checked.
 */
import type { z } from "zod";
import type { ModelInfo } from "../catalog/schema.js";
import type { Citation, EngineEvent, JobStatus, ProviderName, Usage } from "./events.js";
import type { JobRef } from "./ref.js";
import type { ParsedRequest, RequestOption } from "./request.js";

/**
 * The version of this spec. An adapter declares the one it was written for as the literal
 * `specVersion: 1`; `createSonde`/`new Sonde()` refuse any other with `UnsupportedAdapterError`.
 */
export const specVersion = 1;

export interface Logger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

export interface RetryPolicy {
  /** Attempts to (re)connect or poll-retry in a row before giving up. @defaultValue 6 */
  attempts: number;
  /** @defaultValue 500 */
  minDelayMs: number;
  /** @defaultValue 30_000 */
  maxDelayMs: number;
}

/** A provider's section of the client config, with the key resolved from options or env. */
export interface ProviderSettings {
  apiKey?: string;
  baseURL?: string;
  /** After a key rotation: refs created with these keys still attach (see README, Refs). Never sent. */
  previousApiKeys?: string[];
  [option: string]: unknown;
}

/** Everything an adapter gets from the client. No adapter reads process.env itself. */
export interface ProviderContext {
  provider: ProviderName;
  settings: ProviderSettings;
  fetch: typeof globalThis.fetch;
  clock: () => Date;
  idleTimeoutMs: number;
  retry: RetryPolicy;
  logger: Logger;
  /** Engine-specific objects from the client config (portable: chat, search, store…). */
  extras: Record<string, unknown>;
}

/** A request after validation: catalog entry resolved, timeout clamped. */
export interface ResolvedRequest extends ParsedRequest {
  provider: ProviderName;
  /** The provider's own model name (`gpt-5.5-pro`, `perplexity/sonar-deep-research`). */
  providerModel: string;
  modelInfo: ModelInfo;
  /** Effective local deadline, after the engine's cap. */
  timeoutMs: number;
  /** What validation changed, so callers can see it (e.g. a timeout above the cap). */
  adjustments: { option: RequestOption; requested: unknown; applied: unknown; reason: string }[];
}

/** One event as it came off the wire (an SSE message, a poll snapshot, a local step). */
export interface WireEvent {
  /**
   * Resume token of this wire event (OpenAI `sequence_number`, Gemini `event_id`, …). An event
   * without one cannot be addressed: a ref taken at it points at the last cursor before it, so
   * attaching may deliver it again, and it is no progress for the reconnect budget.
   */
  cursor?: string | undefined;
  /** The decoded payload; becomes `rawEvent` on what it maps to. */
  data: unknown;
  /**
   * A full-state poll snapshot (a fallback after a refused resume). It ends attach
   * suppression unless it carries the ref's own cursor (give a final snapshot a stable
   * cursor such as `FINAL_CURSOR`, so a ref taken part-way through its events resumes
   * after exactly those); `map` emits only what its state still lacks.
   */
  snapshot?: boolean;
}

/** Counts an engine reports; the core fills the rest and prices it (see cost.ts). */
export type UsageReport = Partial<Omit<Usage, "costUSD" | "costSource">> & {
  /** The provider's own charge in USD, when it reports one. */
  providerCostUSD?: number;
  /** The engine's own estimate in USD, reported as is (`costSource: "estimate"`) instead of the catalog-price one. */
  estimatedCostUSD?: number;
};

/** What an adapter's `map` returns: research events, with `usage` as raw counts. */
export type MappedEvent =
  | Exclude<EngineEvent, { type: "usage" } | { type: "done" }>
  | { type: "usage"; usage: UsageReport; rawEvent?: unknown };

export interface ConnectOptions {
  /** Resume after this cursor; undefined = from the start (or submit, if not yet submitted). */
  cursor: string | undefined;
  signal: AbortSignal;
  /**
   * Nobody watches this job's events one by one (`result()` alone, no observer, no spend
   * cap): consecutive text deltas of one read may be handed over joined, as one wire event
   * with the cursor of the last one it holds. The result and the ref must come out as
   * without it. A session may ignore it.
   */
  coalesce?: boolean;
}

/**
 * One job's conversation with an engine. The core calls `connect` (again after a
 * drop, when `resumable`), passes every new wire event through `map` in order, and
 * stops at the first terminal `status` event.
 */
export interface EngineSession {
  /** The provider's job id once known (from the submit response or the first event). */
  readonly jobId: string | undefined;
  /** A dropped connection can be reopened after `jobId` is known. */
  readonly resumable: boolean;
  /** The job runs in this process (the portable engine), not on a provider's servers. */
  readonly local?: boolean;
  /**
   * Stops this process's work on a local job once the session stops following it: the
   * job's state stays in its store, and attaching its ref continues it. Remote engines omit it.
   */
  detach?(): Promise<void>;
  /**
   * Yields wire events. Before `jobId` is known, the first call submits the job; it
   * must throw a `retryable` error only when the submission was certainly not accepted
   * (a status line came back), and `IndeterminateSubmissionError` when it may have been.
   * May yield an array: the wire events that arrived together (e.g. one network read), in
   * order — the same as yielding them one by one, at one async step for all of them (an
   * empty array is no read). For
   * opaque cursors (no `cursorRank`), what a reconnection repeats must come before anything
   * new in the connection's arrays after its first: the core looks up a connection's first
   * array event by event, and a later array only until one of its events is new.
   */
  connect(options: ConnectOptions): AsyncIterable<WireEvent | readonly WireEvent[]>;
  /**
   * Maps one wire event (stateful: accumulates what offsets need). A throw ends the job at
   * this event, retryable or not (it is not a dropped stream): its ref resumes here.
   */
  map(wire: WireEvent): MappedEvent[];
  /** Orders cursors for dedup; return undefined for opaque tokens. */
  cursorRank?(cursor: string): number | undefined;
  /** What the ref's `resume` must hold to continue; never a secret. */
  resumeState(): Record<string, unknown>;
  /**
   * The engine's own deadline for the job (the portable research deadline), when it has
   * one and knows it; the ref's `deadlineAt` carries it instead of the local timeout.
   */
  deadlineAt?(): string | undefined;
}

/** What `attach` passes on to the engine. */
export interface EngineAttachOptions {
  /**
   * Portable: send again the calls that were in flight when the job's previous runner
   * stopped. They may have been billed already; by default each becomes a gap instead.
   */
  repeatInterruptedCalls?: boolean;
}

export interface JobSnapshot {
  provider: ProviderName;
  model: string;
  jobId: string;
  status: JobStatus;
  /** The report, once the job is terminal and the provider returns it. */
  report?: string;
  citations?: Citation[];
  usage?: Usage;
  /** Money the provider holds for the job (hosted job API). */
  reservedUSD?: number;
  error?: { code: string; message: string };
  raw?: unknown;
}

export type SnapshotReport = Omit<JobSnapshot, "usage"> & { usage?: UsageReport };

/**
 * Honest answer to a cancel: `cancelled` (confirmed terminal), `already-terminal` (it had
 * finished first: completion won), `transport-only` (the engine cannot cancel; the
 * connection was closed and the job may keep running and billing), or `pending`
 * (asked; no terminal status observed yet).
 */
export interface CancelOutcome {
  outcome: "cancelled" | "already-terminal" | "transport-only" | "pending";
  finalStatus?: JobStatus;
  /** Why, in a sentence, when the outcome is not a clean `cancelled`. */
  detail?: string;
  /** The job's usage as the provider reported it when cancelled, e.g. the charge for work already done. */
  usage?: Usage;
}

/** What an adapter's `cancel` returns: a `CancelOutcome` with `usage` as raw counts (the core prices it). */
export type CancelReport = Omit<CancelOutcome, "usage"> & { usage?: UsageReport };

/**
 * What a provider folder exports: one object per engine, given to `createSonde({ adapters })`
 * (or wired into `new Sonde()` by the registry). It holds no state of its own; per-client
 * state lives in the `ProviderContext` it is passed.
 */
export interface ResearchAdapter {
  /** The spec version this adapter implements: the literal `specVersion` (1), checked when a client is made. */
  readonly specVersion: typeof specVersion;
  /** The engine it runs: the prefix of its model ids (`openai:…`) and the `provider` of its refs and events. */
  readonly provider: ProviderName;
  /**
   * This engine's catalog entries (`catalog/<provider>.ts`): a client knows the models of the
   * engines it was built with, so an app bundles only those engines' catalog.
   */
  readonly models: readonly ModelInfo[];
  /**
   * The zod schema of this engine's section of the client options (`new Sonde({ openai: … })`),
   * exported by the provider beside its settings type. When given, the client checks the section
   * against it when it is made and throws `InvalidRequestError` naming the field.
   */
  readonly settingsSchema?: z.ZodType;
  /** Optional request fields this engine honours; any other field that is set is rejected. */
  readonly supports: readonly RequestOption[];
  /** Throws for a ref this engine can never follow (a retired model's): run before the key check. */
  checkRef?(ref: JobRef): void;
  /** Throws for settings a real request needs (hosted's base URL); checked with the key, skipped under mocks. */
  checkConfig?(context: ProviderContext): void;
  /** Field-level checks beyond `supports`; throws `UnsupportedOptionError`/`InvalidRequestError`. */
  validate?(request: ResolvedRequest, context: Pick<ProviderContext, "settings" | "extras">): void;
  /**
   * Starts a job: returns its session at once, without network I/O; the submission happens on
   * the session's first `connect`, so the core's deadline, abort and retry rules cover it.
   */
  start(request: ResolvedRequest, context: ProviderContext): EngineSession;
  /**
   * Follows a job from its ref (after a restart, or in another process): the session resumes
   * after `ref.cursor` when the engine can, else reads the job's state. An engine that cannot
   * follow a job again (OpenRouter) throws `UnsupportedOptionError`.
   */
  attach(ref: JobRef, context: ProviderContext, options?: EngineAttachOptions): EngineSession;
  /** One look at a job's state (status, and the report once terminal) without following it. */
  get(ref: JobRef, context: ProviderContext): Promise<SnapshotReport>;
  /** Asks the engine to stop the job and says honestly what happened (`CancelReport.outcome`). */
  cancel(ref: JobRef, context: ProviderContext): Promise<CancelReport>;
}
