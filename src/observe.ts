/**
 * The one hook integrations (tracing, `sonde/tracing`) use to watch a job: a function the
 * job calls with what happens to it, including what its events cannot show (reconnects,
 * resumes, a fall back to polling). The core imports no integration: a client given no
 * `telemetry` never builds an observer, and a job without one pays one `undefined` check.
 */
import type { SondeError } from "./errors.js";
import type { JobStatus, ProviderName, ResearchEvent, Usage } from "./events.js";
import type { CancelOutcome } from "./provider.js";

export type JobSignal =
  /** Every event the job delivers, in order. */
  | { type: "event"; event: ResearchEvent }
  /** The stream dropped (or ended early) after progress; Sonde reconnects from the cursor. */
  | { type: "reconnect"; error: string }
  /** Opening (or reopening) the connection failed; try `attempt` is retried after `delayMs`. */
  | { type: "retry"; attempt: number; delayMs: number; error: string }
  /** A reopened connection delivered new events again, after `cursor` (undefined: from the start). */
  | { type: "resume"; cursor: string | undefined }
  /** A streaming engine answered with a polled snapshot instead (its stream could not be resumed). */
  | { type: "poll-fallback" }
  /** A cancel was asked, by the user or by the spend cap, and this is what the provider said. */
  | { type: "cancel"; by: "user" | "cost-cap"; outcome: CancelOutcome }
  /** The job object is done: a terminal status, or `aborted` (abort, timeout, consumer stopped). */
  | { type: "end"; status: JobStatus | "aborted"; usage: Usage; error?: SondeError | Error };

export type JobObserver = (signal: JobSignal) => void;

/** What an integration is told about a job when it is made. Holds no secret. */
export interface JobDescription {
  provider: ProviderName;
  /** Catalog id, `provider:model`. */
  model: string;
  /** The provider's own model (or agent) name. */
  providerModel: string;
  /** Made by `attach(ref)` rather than `start(request)`. */
  attached: boolean;
  /** The job id, known up front for an attached job. */
  jobId?: string;
  pollOnly: boolean;
  maxCostUSD?: number;
  /**
   * Scrubs every key this client was configured with (and key-shaped strings): apply it to
   * any text an integration exports. Passed in, so a second copy of Sonde's modules (a CJS
   * entry bundled apart) still knows the client's keys.
   */
  redact: (text: string) => string;
}

/** What `new Sonde({ telemetry })` takes: one observer per job, or undefined to skip it. */
export interface SondeTelemetry {
  observeJob(job: JobDescription): JobObserver | undefined;
}

/** Calls the observer, never letting it break the job it watches. */
export function notify(observer: JobObserver | undefined, signal: JobSignal): void {
  if (!observer) return;
  try {
    observer(signal);
  } catch {
    // A broken integration must not change what the job delivers.
  }
}
