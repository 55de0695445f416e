/**
 * Gemini Interactions API wire shapes (WIRE.md), modelled
 * apart from Sonde's public types and kept lenient: every field is optional and unknown
 * keys pass, so a new field or event never breaks a running job. Converted once, in map.ts.
 */
import { z } from "zod";

/** Selects the steps schema (WIRE.md §0). Sent on every request. */
export const API_REVISION = "2026-05-20";

export const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta";

const count = z.number().nullish();

export const WireUsage = z.lazy(() =>
  z.looseObject({
    total_input_tokens: count,
    total_output_tokens: count,
    total_thought_tokens: count,
    /** The first (Dec 2025) name of `total_thought_tokens`. */
    total_reasoning_tokens: count,
    total_tool_use_tokens: count,
    total_cached_tokens: count,
    total_tokens: count,
    grounding_tool_count: z.array(z.looseObject({ type: z.string().nullish(), count })).nullish(),
  }),
);
export type WireUsage = z.infer<typeof WireUsage>;

export const WireAnnotation = z.lazy(() =>
  z.looseObject({
    type: z.string().nullish(),
    url: z.string().nullish(),
    title: z.string().nullish(),
    start_index: z.number().nullish(),
    end_index: z.number().nullish(),
    // file_citation
    document_uri: z.string().nullish(),
    file_name: z.string().nullish(),
    // place_citation, and the untyped Dec-2025 form `{source, start_index, end_index}`
    name: z.string().nullish(),
    source: z.string().nullish(),
  }),
);
export type WireAnnotation = z.infer<typeof WireAnnotation>;

export const WireContent = z.lazy(() =>
  z.looseObject({
    type: z.string().nullish(),
    text: z.string().nullish(),
    annotations: z.array(WireAnnotation).nullish(),
  }),
);
export type WireContent = z.infer<typeof WireContent>;

/** A step (steps schema) or a content block (legacy); both carry the same tool fields. */
export const WireStep = z.lazy(() =>
  z.looseObject({
    type: z.string().nullish(),
    id: z.string().nullish(),
    call_id: z.string().nullish(),
    name: z.string().nullish(),
    server_name: z.string().nullish(),
    arguments: z.record(z.string(), z.unknown()).nullish(),
    result: z.unknown().optional(),
    is_error: z.boolean().nullish(),
    /** `thought` steps. */
    summary: z.array(WireContent).nullish(),
    /** `model_output` steps. */
    content: z.array(WireContent).nullish(),
    /** Legacy text content blocks carry their text directly. */
    text: z.string().nullish(),
    annotations: z.array(WireAnnotation).nullish(),
  }),
);
export type WireStep = z.infer<typeof WireStep>;

export const WireError = z.lazy(() =>
  z.looseObject({
    code: z.union([z.string(), z.number()]).nullish(),
    message: z.string().nullish(),
    status: z.string().nullish(),
  }),
);
export type WireError = z.infer<typeof WireError>;

export const WireInteraction = z.lazy(() =>
  z.looseObject({
    id: z.string().nullish(),
    status: z.string().nullish(),
    agent: z.string().nullish(),
    model: z.string().nullish(),
    steps: z.array(WireStep).nullish(),
    /** Legacy schema. */
    outputs: z.array(WireStep).nullish(),
    usage: WireUsage.nullish(),
    previous_interaction_id: z.string().nullish(),
    errors: z.array(WireError).nullish(),
    error: WireError.nullish(),
  }),
);
export type WireInteraction = z.infer<typeof WireInteraction>;

export const WireDelta = z.lazy(() =>
  z.looseObject({
    type: z.string().nullish(),
    text: z.string().nullish(),
    annotations: z.array(WireAnnotation).nullish(),
    /** `thought_summary`: `{type: "text", text}`. */
    content: WireContent.nullish(),
    id: z.string().nullish(),
    call_id: z.string().nullish(),
    name: z.string().nullish(),
    server_name: z.string().nullish(),
    arguments: z.record(z.string(), z.unknown()).nullish(),
    result: z.unknown().optional(),
    is_error: z.boolean().nullish(),
  }),
);
export type WireDelta = z.infer<typeof WireDelta>;

/** One SSE event of either schema; `event_type` picks the fields that matter. */
export const WireEvent = z.lazy(() =>
  z.looseObject({
    event_type: z.string(),
    event_id: z.string().nullish(),
    interaction: WireInteraction.nullish(),
    interaction_id: z.string().nullish(),
    status: z.string().nullish(),
    index: z.number().nullish(),
    step: WireStep.nullish(),
    /** Legacy `content.start`. */
    content: WireStep.nullish(),
    delta: WireDelta.nullish(),
    usage: WireUsage.nullish(),
    metadata: z.looseObject({ total_usage: WireUsage.nullish() }).nullish(),
    error: WireError.nullish(),
  }),
);
export type WireEvent = z.infer<typeof WireEvent>;

/** Interaction statuses that end a job (WIRE.md §4). `requires_action` cannot progress unattended. */
export function isTerminalStatus(status: string | null | undefined): boolean {
  return (
    status === "completed" ||
    status === "failed" ||
    status === "cancelled" ||
    status === "incomplete" ||
    status === "budget_exceeded" ||
    status === "requires_action"
  );
}

/**
 * Legacy events renamed to their steps-schema equivalents (WIRE.md §0), so one mapper reads both:
 * `content.*` → `step.*` (field `content` → `step`, a `text` block → `model_output`),
 * `interaction.start/complete` → `interaction.created/completed`.
 */
export function normalizeLegacy(event: WireEvent): WireEvent {
  switch (event.event_type) {
    case "interaction.start":
      return { ...event, event_type: "interaction.created" };
    case "interaction.complete":
      return { ...event, event_type: "interaction.completed" };
    case "content.start": {
      const block = event.content ?? {};
      const step = block.type === "text" ? { ...block, type: "model_output" } : block;
      return { ...event, event_type: "step.start", step };
    }
    case "content.delta": {
      const delta =
        event.delta?.type === "text_annotation"
          ? { ...event.delta, type: "text_annotation_delta" }
          : event.delta;
      return { ...event, event_type: "step.delta", delta };
    }
    case "content.stop":
      return { ...event, event_type: "step.stop" };
    default:
      return event;
  }
}
