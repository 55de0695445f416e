/**
 * The public event types, `ProviderName` and `isTerminal`. The zod schemas of the events
 * (`ResearchEvent`, `Usage`, …) are in event-schemas.ts: the core does not use them at run
 * time, so an app that does not either leaves them out of its bundle.
 */
import { z } from "zod";
import type { JobStatus, ResearchEvent, TerminalStatus } from "./event-schemas.js";
import { lazySchema } from "./lazy-schema.js";

export type {
  Citation,
  EventError,
  Gap,
  GapKind,
  JobStatus,
  ResearchEvent,
  ResearchPhase,
  TerminalStatus,
  Usage,
} from "./event-schemas.js";

/** Engines Sonde can drive. The prefix of every model id (`openai:gpt-5.5-pro`). */
export const ProviderName = lazySchema(() =>
  z.enum(["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"]),
);
export type ProviderName = z.infer<typeof ProviderName>;

/**
 * True for a status a job never leaves (`completed`, `failed`, `cancelled`, `incomplete`).
 * @example
 * ```ts
 * import { isTerminal } from "sonde";
 *
 * for await (const event of job) if (event.type === "status" && isTerminal(event.status)) console.log("ended", event.status);
 * ```
 */
export function isTerminal(status: JobStatus | undefined): status is TerminalStatus {
  return status === "completed" || status === "failed" || status === "cancelled" || status === "incomplete";
}

export type ResearchEventType = ResearchEvent["type"];

export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event before the core numbers it. */
export type UnsequencedEvent = DistributiveOmit<ResearchEvent, "seq">;

/** An event as an engine emits it: the core assigns `seq` (and the cursor of its wire event). */
export type EngineEvent = DistributiveOmit<ResearchEvent, "seq" | "cursor">;
