import type { ModelInfo } from "../../catalog/schema.js";
import type { ResearchResult } from "../aggregate.js";
import type { CostEstimate } from "../estimate.js";
import { isTerminal, type JobStatus, type ResearchEvent, type Usage } from "../events.js";
import { dollars } from "../spend.js";

/** Live progress for stderr: phase, searches, sources, tokens, cost so far. One line, rewritten. */
export class Progress {
  #phase = "starting";
  #searches = 0;
  #sources = new Set<string>();
  #usage: Usage | undefined;
  #status: JobStatus = "queued";

  update(event: ResearchEvent): boolean {
    switch (event.type) {
      case "phase":
        this.#phase = event.phase;
        return true;
      case "status":
        this.#status = event.status;
        return true;
      case "search":
        if (event.state === "started" && event.action === "search") this.#searches++;
        if (event.url) this.#sources.add(event.url);
        return true;
      case "citation":
        this.#sources.add(event.citation.url);
        return true;
      case "usage":
        this.#usage = event.usage;
        return true;
      default:
        return false;
    }
  }

  line(): string {
    const usage = this.#usage;
    const tokens = usage
      ? usage.inputTokens + usage.outputTokens + usage.reasoningTokens + usage.internalReasoningTokens
      : 0;
    const cost = usage
      ? `${dollars(usage.costUSD)}${usage.costSource === "estimate" ? " (est.)" : ""}`
      : dollars(0);
    // Once the job is over, its last phase (often `verifying`) is no longer what it is doing.
    const phase = isTerminal(this.#status) ? "" : ` ${this.#phase}`;
    return `[${this.#status}]${phase} · ${this.#searches} searches · ${this.#sources.size} sources · ${tokens} tokens · ${cost}`;
  }
}

/** The sources section printed after the report. */
export function renderSources(result: Pick<ResearchResult, "citations" | "gaps">): string {
  const lines: string[] = [];
  if (result.citations.length) {
    lines.push("", "## Sources", "");
    result.citations.forEach((c, i) => {
      lines.push(
        `${i + 1}. ${c.title ? `[${c.title}](${c.url})` : c.url}${c.verified ? " (quote verified)" : ""}`,
      );
    });
  }
  if (result.gaps.length) {
    lines.push("", "## Gaps", "");
    for (const gap of result.gaps)
      lines.push(`- ${gap.kind}: ${gap.detail}${gap.source ? ` (${gap.source})` : ""}`);
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

/**
 * Token rates of zero that the catalog does not confirm are placeholders (the portable engine:
 * what it costs is what the chat model and search backend you configure charge).
 */
function pricedElsewhere(prices: Pick<ModelInfo["pricing"], "inputPerM" | "outputPerM">, confirmed: boolean) {
  return !confirmed && prices.inputPerM === 0 && prices.outputPerM === 0;
}

const configuredCost =
  "that of the chat model and search backend you configure (the catalog has no price for them)";

function typicalCost(estimate: CostEstimate): string {
  const { typical } = estimate;
  if (typical === "unknown") {
    // A service that resells another's research (the hosted API) is priced by its markup.
    const { markup } = estimate.prices;
    if (markup !== undefined) return `charged ${markup}× the upstream provider's cost, typical cost unknown`;
    return pricedElsewhere(estimate.prices, estimate.pricesConfirmed) && estimate.holdUSD === undefined
      ? configuredCost
      : "typical cost unknown";
  }
  // A confirmed nothing (the offline demo) is said as such, not as a range from $0.00 to $0.00.
  if (typical.highUSD === 0 && typical.confirmed)
    return `${dollars(0)} per job${typical.basis ? ` (${typical.basis})` : ""}`;
  return `typically ${dollars(typical.lowUSD)}–${dollars(typical.highUSD)} per job${typical.confirmed ? "" : " (unconfirmed)"}`;
}

/** The pre-flight cost lines for stderr: typical range (or unknown), hold, cap and its limits. */
export function renderEstimate(estimate: CostEstimate): string {
  const typical = typicalCost(estimate);
  const parts = [`cost: ${typical}`];
  if (estimate.holdUSD !== undefined)
    parts.push(`the provider holds ${dollars(estimate.holdUSD)} at the start`);
  if (estimate.maxCostUSD !== undefined)
    parts.push(
      `cap ${dollars(estimate.maxCostUSD)}${estimate.capChecked === "at-end" ? ", checked only when the job ends" : ""}`,
    );
  const notes = estimate.notes
    .filter((note) => estimate.maxCostUSD !== undefined && /cap|billing/.test(note))
    .map((note) => `  note: ${note}\n`);
  return `${parts.join(" · ")}\n${notes.join("")}`;
}

/** What a model costs, as `sonde models` says it: token rates, or the hosted hold and markup. */
export function describePricing(pricing: ModelInfo["pricing"]): string {
  const parts: string[] = [];
  if (pricing.reservationUSD !== undefined) parts.push(`${dollars(pricing.reservationUSD)} hold`);
  if (pricing.markup !== undefined) parts.push(`charged ${pricing.markup}× provider cost`);
  if (!parts.length && pricedElsewhere(pricing, pricing.verified)) return `cost: ${configuredCost}`;
  const free = pricing.typicalJobUSD;
  if (
    !parts.length &&
    free?.verified &&
    free.high === 0 &&
    pricing.inputPerM === 0 &&
    pricing.outputPerM === 0
  )
    return `${dollars(0)} per job${free.basis ? ` (${free.basis})` : ""}`;
  // Token rates of 0 beside a hold or markup mean "not priced per token", not "free".
  if (!parts.length || pricing.inputPerM > 0 || pricing.outputPerM > 0) {
    const cached = pricing.cachedInputPerM !== undefined ? ` ($${pricing.cachedInputPerM} cached)` : "";
    parts.unshift(`$${pricing.inputPerM}${cached}/$${pricing.outputPerM} per M`);
  }
  return `${parts.join(" · ")}${pricing.verified ? "" : " (unconfirmed)"}`;
}

/** A model's lifecycle: its stage, and since or until when it serves requests. */
export function describeLifecycle(lifecycle: ModelInfo["lifecycle"], now: Date): string {
  const shutdown = lifecycle.shutdownAt;
  if (!shutdown) return lifecycle.stage;
  const day = shutdown.slice(0, 10);
  if (lifecycle.stage === "retired" || Date.parse(shutdown) <= now.getTime()) return `retired since ${day}`;
  return `${lifecycle.stage} until ${day}`;
}

/** One line of `sonde models`. */
export function describeModel(model: ModelInfo, now: Date): string {
  const mode = model.capabilities.pollOnly ? "poll" : model.capabilities.streaming ? "stream" : "-";
  return `${model.id.padEnd(48)} ${describeLifecycle(model.lifecycle, now)} · ${mode} · ${describePricing(model.pricing)}`;
}
