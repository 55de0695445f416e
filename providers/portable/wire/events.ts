/**
 * The portable engine's own wire events, as persisted in the job store (`PortableWire`,
 * lenient on read) and as the loop emits them (`WireData`).
 */
import { z } from "zod";

const Phase = z.enum(["planning", "searching", "reading", "reasoning", "writing", "verifying"]);
const Status = z.enum(["queued", "running", "completed", "failed", "cancelled", "incomplete"]);

export const PortableWire = z.lazy(() =>
  z.discriminatedUnion("type", [
    z.object({ type: z.literal("created"), jobId: z.string(), model: z.string() }),
    z.object({ type: z.literal("status"), status: Status }),
    z.object({ type: z.literal("phase"), phase: Phase }),
    z.object({
      type: z.literal("search"),
      action: z.enum(["search", "open_page", "find_in_page"]),
      query: z.string().nullish(),
      url: z.string().nullish(),
      state: z.enum(["started", "completed", "failed"]),
    }),
    z.object({ type: z.literal("text"), delta: z.string() }),
    z.object({
      type: z.literal("citation"),
      citation: z.object({
        url: z.string(),
        title: z.string().nullish(),
        snippet: z.string().nullish(),
        quote: z.string().nullish(),
        page: z.number().int().positive().nullish(),
        startIndex: z.number().int().nonnegative().nullish(),
        endIndex: z.number().int().nonnegative().nullish(),
        verified: z.boolean().nullish(),
      }),
    }),
    z.object({
      type: z.literal("usage"),
      usage: z.object({
        inputTokens: z.number().nullish(),
        outputTokens: z.number().nullish(),
        reasoningTokens: z.number().nullish(),
        searches: z.number().nullish(),
        fetches: z.number().nullish(),
        modelCalls: z.number().nullish(),
        providerCostUSD: z.number().nullish(),
      }),
    }),
    z.object({
      type: z.literal("gap"),
      gap: z.object({
        kind: z.enum([
          "missing-evidence",
          "budget-exhausted",
          "unreadable-source",
          "malformed-output",
          "corpus-limit",
          "deadline",
          "interrupted",
        ]),
        detail: z.string(),
        source: z.string().nullish(),
      }),
    }),
  ]),
);
export type PortableWire = z.infer<typeof PortableWire>;

/** What the loop emits; the same shape, with `undefined` for absent fields. */
export type WireData =
  | { type: "created"; jobId: string; model: string }
  | { type: "status"; status: z.infer<typeof Status> }
  | { type: "phase"; phase: z.infer<typeof Phase> }
  | {
      type: "search";
      action: "search" | "open_page";
      query?: string;
      url?: string;
      state: "started" | "completed" | "failed";
    }
  | { type: "text"; delta: string }
  | {
      type: "citation";
      citation: {
        url: string;
        title?: string;
        quote?: string;
        page?: number;
        startIndex: number;
        endIndex: number;
        verified: boolean;
      };
    }
  | {
      type: "usage";
      usage: {
        inputTokens: number;
        outputTokens: number;
        reasoningTokens: number;
        searches: number;
        fetches: number;
        modelCalls: number;
        providerCostUSD?: number;
      };
    }
  | {
      type: "gap";
      gap: {
        kind:
          | "missing-evidence"
          | "budget-exhausted"
          | "unreadable-source"
          | "malformed-output"
          | "corpus-limit"
          | "deadline"
          | "interrupted";
        detail: string;
        source?: string;
      };
    };
