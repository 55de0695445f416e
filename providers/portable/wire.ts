/**
 * Wire shapes, minimal and lenient (unknown keys pass, optional fields are `nullish`):
 * the OpenAI-compatible chat completion, the three search APIs, the JSON the model is
 * asked to produce, and the portable engine's own persisted wire events.
 */
import { z } from "zod";

// --- OpenAI-compatible `POST /chat/completions` (non-streaming) ---

const ContentPart = z.object({ type: z.string().nullish(), text: z.string().nullish() });

export const ChatCompletion = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.union([z.string(), z.array(ContentPart)]).nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z
    .object({
      prompt_tokens: z.number().nullish(),
      completion_tokens: z.number().nullish(),
      total_tokens: z.number().nullish(),
      completion_tokens_details: z.object({ reasoning_tokens: z.number().nullish() }).nullish(),
      /** OpenRouter: the charge in credits (1 credit = 1 USD). */
      cost: z.number().nullish(),
    })
    .nullish(),
});
export type ChatCompletion = z.infer<typeof ChatCompletion>;

// --- Search APIs ---

/** Tavily `POST /search`. */
export const TavilyResponse = z.object({
  results: z
    .array(z.object({ url: z.string(), title: z.string().nullish(), content: z.string().nullish() }))
    .nullish(),
});

/** Brave `GET /res/v1/web/search`. */
export const BraveResponse = z.object({
  web: z
    .object({
      results: z
        .array(z.object({ url: z.string(), title: z.string().nullish(), description: z.string().nullish() }))
        .nullish(),
    })
    .nullish(),
});

/** SearXNG `GET /search?format=json`. */
export const SearxngResponse = z.object({
  results: z
    .array(z.object({ url: z.string(), title: z.string().nullish(), content: z.string().nullish() }))
    .nullish(),
});

// --- What the model is asked to return (see prompts.ts) ---

const text = z.string().trim().min(1);

export const PlanOutput = z.object({ queries: z.array(text).min(1) });
export type PlanOutput = z.infer<typeof PlanOutput>;

export const ExtractOutput = z.object({
  findings: z.array(z.object({ source: text, claim: text, quote: text })),
});
export type ExtractOutput = z.infer<typeof ExtractOutput>;

export const CheckOutput = z.object({
  checks: z.array(
    z.object({
      id: text,
      verdict: z.enum(["supported", "contradicted", "unsupported"]),
      reason: z.string().nullish(),
    }),
  ),
});
export type CheckOutput = z.infer<typeof CheckOutput>;

const NumberLike = z.union([z.number(), z.string().trim().min(1)]);

export const DerivedInput = z.object({
  finding: text,
  value: NumberLike,
  unit: z.string().nullish(),
  date: z.string().nullish(),
});
export type DerivedInput = z.infer<typeof DerivedInput>;

export const DerivedNumber = z.object({
  id: text,
  formula: text,
  inputs: z.record(z.string(), DerivedInput),
  result: NumberLike,
  unit: z.string().nullish(),
});
export type DerivedNumber = z.infer<typeof DerivedNumber>;

export const WriteOutput = z.object({
  title: z.string().nullish(),
  sections: z.array(z.object({ heading: z.string().nullish(), paragraphs: z.array(z.string()) })).min(1),
  derived: z.array(DerivedNumber).nullish(),
});
export type WriteOutput = z.infer<typeof WriteOutput>;

// --- The engine's own wire events (persisted in the job store) ---

const Phase = z.enum(["planning", "searching", "reading", "reasoning", "writing", "verifying"]);
const Status = z.enum(["queued", "running", "completed", "failed", "cancelled", "incomplete"]);

export const PortableWire = z.discriminatedUnion("type", [
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
]);
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
