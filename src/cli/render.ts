import type { ResearchResult } from "../aggregate.js";
import type { ResearchEvent, Usage } from "../events.js";

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
