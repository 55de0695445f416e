/**
 * `sonde/core`: the client without any engine. `createSonde({ adapters: [openaiAdapter] })`
 * runs the engines imported from `sonde/providers/*`, so a bundle holds only those.
 */
export type { ModelFilter, ModelId, ModelInfo } from "../catalog/index.js";
export type { ResearchResult } from "./aggregate.js";
export { normalizeUrl } from "./aggregate.js";
export {
  type CreateSondeOptions,
  createSonde,
  type EngineSettings,
  type HostedSettings,
  type OpenAISettings,
  type OpenRouterSettings,
  type PerplexitySettings,
  type PortableSettings,
  SondeClient,
  type SondeOptions,
} from "./client.js";
export { estimateCost } from "./cost.js";
export * from "./errors.js";
export type { CostEstimate } from "./estimate.js";
export * from "./event-schemas.js";
export * from "./events.js";
export { ResearchJob } from "./job.js";
export type { JobDescription, JobObserver, JobSignal, SondeTelemetry } from "./observe.js";
// The adapter spec (EngineSession, ResearchAdapter, WireEvent, …) is in `sonde/provider`.
export type { CancelOutcome, JobSnapshot, Logger, ResolvedRequest, RetryPolicy } from "./provider.js";
export { JobRef, parseRef, refLimits } from "./ref.js";
export { type RequestOption, ResearchRequest, type ToolSpec } from "./request.js";
export type { AttachOptions, RefCallOptions, ResearchNamespace, StartOptions } from "./research.js";
