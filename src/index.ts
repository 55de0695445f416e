export type { ModelFilter, ModelInfo } from "../catalog/index.js";
export type { ResearchResult } from "./aggregate.js";
export { normalizeUrl } from "./aggregate.js";
export {
  type HostedSettings,
  type OpenAISettings,
  type OpenRouterSettings,
  type PerplexitySettings,
  type PortableSettings,
  Sonde,
  type SondeOptions,
} from "./client.js";
export { estimateCost } from "./cost.js";
export * from "./errors.js";
export type { CostEstimate } from "./estimate.js";
export * from "./events.js";
export { type JobInit, ResearchJob } from "./job.js";
export type { JobDescription, JobObserver, JobSignal, SondeTelemetry } from "./observe.js";
export {
  type CancelOutcome,
  type CancelReport,
  type ConnectOptions,
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
export { JobRef, parseRef, refLimits } from "./ref.js";
export { type RequestOption, ResearchRequest, type ToolSpec } from "./request.js";
export type { AttachOptions, RefCallOptions, ResearchNamespace, StartOptions } from "./research.js";
