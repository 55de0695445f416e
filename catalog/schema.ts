import { z } from "zod";

/** Built-in tools a research engine can be given. */
export const ToolType = z.enum(["web_search", "file_search", "mcp", "code_interpreter"]);
export type ToolType = z.infer<typeof ToolType>;

export const Capabilities = z.strictObject({
  /** Server-sent progress while the job runs. */
  streaming: z.boolean(),
  /** The job runs server-side without an open connection. */
  background: z.boolean(),
  /** A dropped stream can continue from a cursor. */
  resume: z.boolean(),
  /** The job can be stopped server-side. */
  cancel: z.boolean(),
  /** `previousJobId` continues an earlier job. */
  followUps: z.boolean(),
  tools: z.array(ToolType),
  /** Progress only by polling; the report arrives whole at the end. */
  pollOnly: z.boolean(),
});
export type Capabilities = z.infer<typeof Capabilities>;

/** USD prices. `verified: false` marks figures not confirmed from the provider's own pages. */
export const Pricing = z.strictObject({
  inputPerM: z.number().nonnegative(),
  /** Input tokens read from the provider's prompt cache, where it prices them apart. */
  cachedInputPerM: z.number().nonnegative().optional(),
  outputPerM: z.number().nonnegative(),
  reasoningPerM: z.number().nonnegative().optional(),
  internalReasoningPerM: z.number().nonnegative().optional(),
  perThousandSearches: z.number().nonnegative().optional(),
  /** Searches per job included for free before `perThousandSearches` applies. */
  freeSearches: z.number().int().nonnegative().optional(),
  perThousandFetches: z.number().nonnegative().optional(),
  perRequest: z.number().nonnegative().optional(),
  /** Amount held when the job is accepted (hosted job API). */
  reservationUSD: z.number().nonnegative().optional(),
  /** Multiplier over provider cost that the operator charges (hosted job API). */
  markup: z.number().positive().optional(),
  /**
   * What one job typically costs in USD, where someone has published a figure; absent = unknown.
   * `verified: false` marks ranges not confirmed from the provider's own pages.
   */
  typicalJobUSD: z
    .strictObject({
      low: z.number().nonnegative(),
      high: z.number().nonnegative(),
      verified: z.boolean(),
      source: z.string().optional(),
      /** What the range assumes (searches, tokens per job). */
      basis: z.string().optional(),
    })
    .refine((range) => range.low <= range.high, "typicalJobUSD.low must not exceed high")
    .optional(),
  verified: z.boolean(),
  source: z.string().optional(),
  notes: z.string().optional(),
});
export type Pricing = z.infer<typeof Pricing>;

export const Lifecycle = z.strictObject({
  stage: z.enum(["preview", "ga", "deprecated", "retired"]),
  /** ISO date-time after which the model no longer serves requests. */
  shutdownAt: z.iso.datetime({ offset: true }).optional(),
  /** Catalog id to use instead. */
  replacement: z.string().optional(),
  /** `false`: whether the provider still serves the model is not confirmed (see `notes`). */
  verified: z.boolean().optional(),
  notes: z.string().optional(),
});
export type Lifecycle = z.infer<typeof Lifecycle>;

export const CatalogProvider = z.enum(["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"]);

export const ModelInfo = z.strictObject({
  /** `provider:model`; a family entry ends in `*` and matches any suffix (`portable:*`). */
  id: z.string().regex(/^[a-z]+:.+$/),
  provider: CatalogProvider,
  /** The provider's own model (or agent) name sent on the wire. */
  model: z.string(),
  displayName: z.string(),
  description: z.string().optional(),
  capabilities: Capabilities,
  limits: z.strictObject({
    /** Longest a job may run; requests' `timeoutMs` is clamped to it. */
    maxDurationMs: z.number().int().positive(),
    maxOutputTokens: z.number().int().positive().optional(),
  }),
  pricing: Pricing,
  lifecycle: Lifecycle,
  /** Other names the provider accepts for the same model (dated snapshots). */
  aliases: z.array(z.string()).optional(),
});
export type ModelInfo = z.infer<typeof ModelInfo>;

export const Catalog = z.array(ModelInfo);
