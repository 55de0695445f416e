import type { ResearchResult } from "../aggregate.js";
import type { CostEstimate } from "../estimate.js";
import type { ResearchEvent, Usage } from "../events.js";
import { dollars } from "../spend.js";

/** Live progress for stderr: phase, searches, sources, tokens, cost so far. One line, rewritten. */
export class Progress {
  #phase = "starting";
  #searches = 0;
  #sources = new Set<string>();
  #usage: Usage | undefined;
  #status = "queued";

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
      ? `$${usage.costUSD.toFixed(4)}${usage.costSource === "estimate" ? " (est.)" : ""}`
      : "$0";
    return `[${this.#status}] ${this.#phase} · ${this.#searches} searches · ${this.#sources.size} sources · ${tokens} tokens · ${cost}`;
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

/** The pre-flight cost lines for stderr: typical range (or unknown), hold, cap and its limits. */
export function renderEstimate(estimate: CostEstimate): string {
  const typical =
    estimate.typical === "unknown"
      ? "typical cost unknown"
      : `typically ${dollars(estimate.typical.lowUSD)}–${dollars(estimate.typical.highUSD)} per job${estimate.typical.confirmed ? "" : " (unconfirmed)"}`;
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
