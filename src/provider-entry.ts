/**
 * `sonde/provider`: the adapter spec, for authors of engines (what `providers/<name>/`
 * implement). Kept out of the main entry so that an app's autocomplete shows only what
 * an app uses.
 */

export { type EngineSettings, engineSettingsSchema } from "./engine-settings.js";
export type { JobInit } from "./job.js";
export {
  type CancelOutcome,
  type CancelReport,
  type ConnectOptions,
  type EngineAttachOptions,
  type EngineSession,
  type JobSnapshot,
  type Logger,
  type MappedEvent,
  type ProviderContext,
  type ProviderSettings,
  type ResearchAdapter,
  type ResolvedRequest,
  type RetryPolicy,
  type SnapshotReport,
  specVersion,
  type UsageReport,
  type WireEvent,
} from "./provider.js";
export type { ParsedRequest } from "./request.js";
export { engineSettingsShape } from "./settings.js";
