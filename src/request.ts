import { z } from "zod";
import type { ModelId } from "../catalog/index.js";
import { lazySchema } from "./lazy-schema.js";

export const ToolSpec = lazySchema(() =>
  z.union([
    z.literal("web_search").transform(() => ({ type: "web_search" as const })),
    z.literal("code_interpreter").transform(() => ({ type: "code_interpreter" as const })),
    z.strictObject({ type: z.literal("web_search") }),
    z.strictObject({ type: z.literal("file_search"), vectorStoreIds: z.array(z.string().min(1)).min(1) }),
    z.strictObject({
      type: z.literal("mcp"),
      serverUrl: z.url(),
      label: z.string().min(1),
      allowedTools: z.array(z.string()).optional(),
    }),
    z.strictObject({ type: z.literal("code_interpreter") }),
  ]),
);
export type ToolSpec = z.output<typeof ToolSpec>;

export const SourceDocument = lazySchema(() =>
  z.strictObject({
    id: z.string().optional(),
    title: z.string().optional(),
    url: z.string().optional(),
    text: z.string().min(1),
  }),
);
export type SourceDocument = z.infer<typeof SourceDocument>;

export const Budget = lazySchema(() =>
  z.strictObject({
    modelCalls: z.number().int().min(1).max(30).optional(),
    searches: z.number().int().min(0).max(20).optional(),
    fetches: z.number().int().min(0).max(40).optional(),
    parallelism: z.number().int().min(1).max(4).optional(),
    deadlineMs: z.number().int().min(1_000).max(900_000).optional(),
    /** A spend cap in USD, honoured by every engine: see "Controlling spend" in the README. */
    maxCostUSD: z.number().positive().finite().optional(),
  }),
);
export type Budget = z.infer<typeof Budget>;

/** What a user asks for. Options an engine cannot honour are rejected, never dropped. */
export const ResearchRequest = lazySchema(() =>
  z.strictObject({
    /** `provider:model`, e.g. `openai:gpt-5.5-pro`. */
    model: z.string().min(1),
    query: z.string().trim().min(1, "query must not be empty"),
    instructions: z.string().optional(),
    /** Research as of this date (ISO date); engines are told to treat it as "today". */
    asOf: z
      .union([z.iso.date(), z.iso.datetime({ offset: true })], {
        error: "asOf takes an ISO date (2026-06-30) or date-time with offset (2026-06-30T12:00:00Z)",
      })
      .optional(),
    /** Desired form of the report, e.g. "a one-page brief with a comparison table". */
    output: z.string().min(1).optional(),
    tools: z.array(ToolSpec).optional(),
    maxToolCalls: z.number().int().positive().optional(),
    reasoning: z
      .strictObject({
        summary: z.enum(["auto", "concise", "detailed"]).optional(),
        includeThinking: z.boolean().optional(),
      })
      .optional(),
    previousJobId: z.string().min(1).optional(),
    /** Local deadline for this job object (default one hour, clamped to the engine's cap). */
    timeoutMs: z.number().int().positive().optional(),
    signal: z
      .custom<AbortSignal>((value) => value instanceof AbortSignal, "signal must be an AbortSignal")
      .optional(),
    sources: z
      .strictObject({
        urls: z.array(z.url()).optional(),
        documents: z.array(SourceDocument).optional(),
        web: z.boolean().optional(),
        allowDomains: z.array(z.string().min(1)).optional(),
        denyDomains: z.array(z.string().min(1)).optional(),
      })
      .optional(),
    budget: Budget.optional(),
    idempotencyKey: z.string().min(1).max(255).optional(),
  }),
);
/** What `start()` takes. `model` completes the catalog's ids and still accepts any string. */
export type ResearchRequest = Omit<z.input<typeof ResearchRequest>, "model"> & { model: ModelId };
export type ParsedRequest = z.output<typeof ResearchRequest>;
export type RequestOption = Exclude<keyof ParsedRequest, "model" | "query">;
