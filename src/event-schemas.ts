/** The zod schemas of Sonde's public events (their types are re-exported by events.ts). */
import { z } from "zod";
import { ProviderName } from "./events.js";
import { lazySchema } from "./lazy-schema.js";

/** Job lifecycle. `completed`, `failed`, `cancelled` and `incomplete` are terminal. */
export const JobStatus = lazySchema(() =>
  z.enum(["queued", "running", "completed", "failed", "cancelled", "incomplete"]),
);
export type JobStatus = z.infer<typeof JobStatus>;

export const TerminalStatus = lazySchema(() => z.enum(["completed", "failed", "cancelled", "incomplete"]));
export type TerminalStatus = z.infer<typeof TerminalStatus>;

export const ResearchPhase = lazySchema(() =>
  z.enum(["planning", "searching", "reading", "reasoning", "writing", "verifying"]),
);
export type ResearchPhase = z.infer<typeof ResearchPhase>;

/**
 * A cited source. `startIndex`/`endIndex` are UTF-16 offsets into the final report
 * (what `String.prototype.slice` takes), whatever unit the provider counted in.
 */
export const Citation = lazySchema(() =>
  z.object({
    url: z.string(),
    title: z.string().optional(),
    snippet: z.string().optional(),
    quote: z.string().optional(),
    /** The page of a paged source (a PDF) that holds `quote`, 1-based. */
    page: z.number().int().positive().optional(),
    startIndex: z.number().int().nonnegative().optional(),
    endIndex: z.number().int().nonnegative().optional(),
    verified: z.boolean().optional(),
  }),
);
export type Citation = z.infer<typeof Citation>;

/**
 * Cumulative cost and consumption of one job. `costSource` says whether `costUSD`
 * is the provider's own charge or Sonde's estimate from catalog pricing.
 */
export const Usage = lazySchema(() =>
  z.object({
    inputTokens: z.number().nonnegative(),
    /** Of `inputTokens`, those the provider read from its prompt cache (priced at the cached rate). */
    cachedInputTokens: z.number().nonnegative().optional(),
    outputTokens: z.number().nonnegative(),
    reasoningTokens: z.number().nonnegative(),
    internalReasoningTokens: z.number().nonnegative(),
    searches: z.number().nonnegative(),
    fetches: z.number().nonnegative(),
    modelCalls: z.number().nonnegative(),
    costUSD: z.number().nonnegative(),
    costSource: z.enum(["provider", "estimate"]),
  }),
);
export type Usage = z.infer<typeof Usage>;

export const GapKind = lazySchema(() =>
  z.enum([
    "missing-evidence",
    "budget-exhausted",
    "unreadable-source",
    "malformed-output",
    "corpus-limit",
    "deadline",
    "interrupted",
    /** The job was stopped at its spend cap (`budget.maxCostUSD`). */
    "cost-cap",
  ]),
);
export type GapKind = z.infer<typeof GapKind>;

/** Something the report could not cover, and why. */
export const Gap = lazySchema(() =>
  z.object({ kind: GapKind, detail: z.string(), source: z.string().optional() }),
);
export type Gap = z.infer<typeof Gap>;

export const EventError = lazySchema(() =>
  z.object({
    code: z.string(),
    message: z.string(),
    retryable: z.boolean(),
    status: z.number().int().optional(),
  }),
);
export type EventError = z.infer<typeof EventError>;

export const ResearchEvent = lazySchema(() => {
  const base = {
    /** SDK-assigned, strictly increasing within one job object. */
    seq: z.number().int().nonnegative(),
    /** The provider's resume token for the wire event this came from, where it has one. */
    cursor: z.string().optional(),
    /** The provider payload this event was mapped from. */
    rawEvent: z.unknown().optional(),
  };
  return z.discriminatedUnion("type", [
    z.object({
      type: z.literal("created"),
      ...base,
      jobId: z.string(),
      provider: ProviderName,
      model: z.string(),
    }),
    z.object({
      type: z.literal("status"),
      ...base,
      status: JobStatus,
      /** Money the provider reserved for the job, where it reports a hold. */
      reservedUSD: z.number().optional(),
    }),
    z.object({ type: z.literal("phase"), ...base, phase: ResearchPhase }),
    z.object({
      type: z.literal("search"),
      ...base,
      action: z.enum(["search", "open_page", "find_in_page"]),
      query: z.string().optional(),
      url: z.string().optional(),
      state: z.enum(["started", "completed", "failed"]),
    }),
    z.object({
      type: z.literal("tool"),
      ...base,
      name: z.string(),
      callId: z.string().optional(),
      state: z.enum(["started", "completed", "failed"]),
      input: z.unknown().optional(),
      output: z.unknown().optional(),
    }),
    z.object({ type: z.literal("thinking"), ...base, delta: z.string() }),
    z.object({ type: z.literal("text"), ...base, delta: z.string() }),
    z.object({ type: z.literal("citation"), ...base, citation: Citation }),
    z.object({ type: z.literal("usage"), ...base, usage: Usage }),
    z.object({ type: z.literal("gap"), ...base, gap: Gap }),
    z.object({ type: z.literal("error"), ...base, error: EventError }),
    z.object({ type: z.literal("done"), ...base, status: TerminalStatus }),
  ]);
});
export type ResearchEvent = z.infer<typeof ResearchEvent>;
