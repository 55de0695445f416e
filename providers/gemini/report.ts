/**
 * Reading a whole Interaction (a GET, a poll, the final snapshot): the report text,
 * its citations with UTF-16 offsets, and the search and page counts of its timeline.
 */
import type { Citation } from "../../src/events.js";
import type { UsageReport } from "../../src/provider.js";
import { OffsetCursor } from "../../src/text-offsets.js";
import type { WireAnnotation, WireInteraction, WireStep, WireUsage } from "./wire.js";

/** The blocks of report text, in order: `model_output` text (steps) or `text` outputs (legacy). */
export function reportBlocks(
  interaction: WireInteraction,
): { text: string; annotations: WireAnnotation[] }[] {
  const blocks: { text: string; annotations: WireAnnotation[] }[] = [];
  if (interaction.steps) {
    for (const step of interaction.steps) {
      if (step.type !== "model_output") continue;
      for (const content of step.content ?? []) {
        if (content.type === "text" && typeof content.text === "string")
          blocks.push({ text: content.text, annotations: content.annotations ?? [] });
      }
    }
  } else {
    for (const output of interaction.outputs ?? []) {
      if (output.type === "text" && typeof output.text === "string")
        blocks.push({ text: output.text, annotations: output.annotations ?? [] });
    }
  }
  return blocks;
}

/** Where a citation points: a web page, a file, or a place. Undefined when it names nothing. */
export function citationTarget(annotation: WireAnnotation): { url: string; title?: string } | undefined {
  const url = annotation.url ?? annotation.document_uri ?? annotation.source ?? undefined;
  if (!url) return undefined;
  const title = annotation.title ?? annotation.file_name ?? annotation.name ?? undefined;
  return title ? { url, title } : { url };
}

/**
 * Converts annotations of one text block (UTF-8 byte offsets into that block, WIRE.md §5) into
 * citations with UTF-16 offsets into the report, where the block starts at `base`.
 */
export function toCitations(text: string, base: number, annotations: WireAnnotation[]): Citation[] {
  const starts = new OffsetCursor("utf8");
  const ends = new OffsetCursor("utf8");
  const citations: Citation[] = [];
  for (const annotation of annotations) {
    const citation = toCitation(
      annotation,
      (bytes) => base + starts.toUtf16(text, bytes),
      (bytes) => base + ends.toUtf16(text, bytes),
    );
    if (citation) citations.push(citation);
  }
  return citations;
}

/** A citation of `annotation`, its UTF-8 byte offsets converted to UTF-16 offsets of the report by `start` and `end`. */
export function toCitation(
  annotation: WireAnnotation,
  start: (bytes: number) => number,
  end: (bytes: number) => number,
): Citation | undefined {
  const target = citationTarget(annotation);
  if (!target) return undefined;
  const citation: Citation = { ...target };
  if (typeof annotation.start_index === "number" && annotation.start_index >= 0)
    citation.startIndex = start(annotation.start_index);
  if (typeof annotation.end_index === "number" && annotation.end_index >= 0)
    citation.endIndex = end(annotation.end_index);
  return citation;
}

/** Identity of one citation occurrence, to emit each once across stream and snapshot. */
export function citationKey(citation: Citation): string {
  return `${citation.url}\u0000${citation.startIndex ?? ""}\u0000${citation.endIndex ?? ""}`;
}

/** The report and its citations, as the stored interaction has them. */
export function readReport(interaction: WireInteraction): { report: string; citations: Citation[] } {
  let report = "";
  const citations: Citation[] = [];
  for (const block of reportBlocks(interaction)) {
    citations.push(...toCitations(block.text, report.length, block.annotations));
    report += block.text;
  }
  return { report, citations };
}

/** Search queries and opened pages in the interaction's timeline. */
export function countActivity(steps: readonly WireStep[] | null | undefined): {
  searches: number;
  fetches: number;
} {
  let searches = 0;
  let fetches = 0;
  for (const step of steps ?? []) {
    if (step.type === "google_search_call") searches += stringList(step.arguments?.queries).length;
    if (step.type === "url_context_call") fetches += stringList(step.arguments?.urls).length;
  }
  return { searches, fetches };
}

export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * Gemini's usage → Sonde's raw counts (WIRE.md §7). The totals are disjoint (total = input +
 * output + tool use + thought), so tool-result tokens count as input, thoughts as
 * reasoning, and output excludes them. Searches: `grounding_tool_count` when the
 * server reports it, else the queries counted in the timeline.
 */
export function toUsageReport(
  usage: WireUsage | null | undefined,
  counted: { searches: number; fetches: number },
): UsageReport {
  const report: UsageReport = { searches: counted.searches, fetches: counted.fetches };
  if (!usage) return report;
  const input = usage.total_input_tokens;
  const toolUse = usage.total_tool_use_tokens;
  if (typeof input === "number" || typeof toolUse === "number")
    report.inputTokens = (input ?? 0) + (toolUse ?? 0);
  // The cached part of the prompt (WIRE.md §7), billed at the context-caching rate.
  if (typeof usage.total_cached_tokens === "number" && usage.total_cached_tokens > 0)
    report.cachedInputTokens = usage.total_cached_tokens;
  if (typeof usage.total_output_tokens === "number") report.outputTokens = usage.total_output_tokens;
  const thought = usage.total_thought_tokens ?? usage.total_reasoning_tokens;
  if (typeof thought === "number") report.reasoningTokens = thought;
  const grounded = usage.grounding_tool_count?.find((entry) => entry.type === "google_search")?.count;
  if (typeof grounded === "number") report.searches = grounded;
  return report;
}
