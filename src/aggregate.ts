import { emptyUsage } from "./cost.js";
import type { Citation, EventError, Gap, JobStatus, ResearchEvent, Usage } from "./events.js";
import { TextBuffer } from "./text-buffer.js";

/** What `job.result()` resolves to. */
export interface ResearchResult {
  jobId: string | undefined;
  status: JobStatus;
  /** The report text, as the concatenation of every `text` delta. */
  report: string;
  /** Deduplicated by normalized URL: fields merged, first position kept. */
  citations: Citation[];
  gaps: Gap[];
  usage: Usage;
  /** Errors the job reported, in order. */
  errors: EventError[];
}

/**
 * Normalizes a URL for citation identity: lower-case scheme and host, no fragment,
 * no default port, no trailing slash, and tracking parameters (`utm_*`) removed —
 * OpenAI appends `?utm_source=openai` to every cited URL.
 * @example
 * ```ts
 * import { normalizeUrl } from "sonde";
 *
 * normalizeUrl("https://example.org/a?utm_source=openai") === normalizeUrl("https://example.org/a"); // true
 * ```
 */
export function normalizeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = "";
    for (const key of [...parsed.searchParams.keys()])
      if (/^utm_/i.test(key)) parsed.searchParams.delete(key);
    parsed.searchParams.sort();
    let out = parsed.toString();
    if (parsed.pathname !== "/" && out.endsWith("/")) out = out.slice(0, -1);
    if (parsed.pathname === "/" && !parsed.search) out = out.replace(/\/$/, "");
    return out;
  } catch {
    return url.trim();
  }
}

/**
 * Folds events into a result. O(1) per event; holds only the report, distinct
 * citations, gaps and errors — not thinking text, which can run to hundreds of
 * thousands of tokens and is for the live stream.
 */
export class ResultAggregator {
  // Flat blocks, not a `+=` rope: a rope keeps a cons cell and the string of every delta.
  #report = new TextBuffer();
  #citations = new Map<string, Citation>();
  /** Normalized keys of the URLs seen (at most one per citation kept or merged). */
  #keys = new Map<string, string>();
  #gaps: Gap[] = [];
  #errors: EventError[] = [];
  #usage: Usage = emptyUsage;
  #status: JobStatus = "queued";
  #jobId: string | undefined;

  add(event: ResearchEvent): void {
    switch (event.type) {
      case "created":
        this.#jobId = event.jobId;
        break;
      case "status":
      case "done":
        this.#status = event.status;
        break;
      case "text":
        this.#report.append(event.delta);
        break;
      case "citation":
        this.addCitation(event.citation);
        break;
      case "gap":
        this.#gaps.push(event.gap);
        break;
      case "error":
        this.#errors.push(event.error);
        break;
      case "usage":
        this.#usage = event.usage;
        break;
    }
  }

  /** A `text` event's delta, without the event (the job's result() fast path). */
  addText(delta: string): void {
    this.#report.append(delta);
  }

  /** A `citation` event's citation, without the event. */
  addCitation(citation: Citation): void {
    // Inline markers cite the same few sources over and over: each URL is parsed once.
    let key = this.#keys.get(citation.url);
    if (key === undefined) {
      key = normalizeUrl(citation.url);
      this.#keys.set(citation.url, key);
    }
    const known = this.#citations.get(key);
    if (!known) {
      this.#citations.set(key, { ...citation });
      return;
    }
    // Merge: fill fields the first sighting lacked; the first position wins.
    for (const field in citation) {
      const name = field as keyof Citation;
      if (known[name] === undefined && citation[name] !== undefined) known[name] = citation[name] as never;
    }
    if (citation.verified === true) known.verified = true;
  }

  result(): ResearchResult {
    return {
      jobId: this.#jobId,
      status: this.#status,
      report: this.#report.toString(),
      citations: [...this.#citations.values()].map((c) => ({ ...c })),
      gaps: [...this.#gaps],
      usage: this.#usage,
      errors: [...this.#errors],
    };
  }
}
