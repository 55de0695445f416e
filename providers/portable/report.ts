/**
 * Turns the model's draft (sections of sentences carrying `[F1]` markers and `{N1}`
 * placeholders) into the Markdown report and its citations, mechanically: markers that
 * name no verified finding are removed, a sentence whose only support was such a marker
 * is dropped, and a placeholder whose number failed its check drops its sentence.
 * Citation offsets are UTF-16 offsets into the final report and span the claim a marker
 * closes. Markers read `[n]`: the n-th distinct source cited, in order of first citation,
 * which is also the order of `result().citations` (the report carries no bibliography of
 * its own, like the other engines' reports).
 */
import { normalizeUrl } from "../../src/aggregate.js";
import type { WriteOutput } from "./wire/model-output.js";

export interface Finding {
  id: string;
  /** Corpus source id (`S1`). */
  source: string;
  url: string;
  title?: string | undefined;
  /** The PDF page the quote is on. */
  page?: number | undefined;
  claim: string;
  quote: string;
}

export interface ReportCitation {
  findingId: string;
  url: string;
  title?: string | undefined;
  quote: string;
  page?: number | undefined;
  startIndex: number;
  endIndex: number;
}

export interface Report {
  text: string;
  citations: ReportCitation[];
  /** What was removed from the draft, one sentence each. */
  problems: string[];
}

class Builder {
  text = "";
  citations: ReportCitation[] = [];
  problems: string[] = [];
  #numbers = new Map<string, number>();

  constructor(readonly findings: ReadonlyMap<string, Finding>) {}

  /** Sources are numbered as `result().citations` will list them: by normalized URL. */
  sourceNumber(finding: Finding): number {
    const key = normalizeUrl(finding.url);
    let n = this.#numbers.get(key);
    if (n === undefined) {
      n = this.#numbers.size + 1;
      this.#numbers.set(key, n);
    }
    return n;
  }

  cite(finding: Finding, start: number, end: number): void {
    this.citations.push({
      findingId: finding.id,
      url: finding.url,
      ...(finding.title && { title: finding.title }),
      quote: finding.quote,
      ...(finding.page && { page: finding.page }),
      startIndex: start,
      endIndex: end,
    });
  }

  /** Appends `raw` with its markers resolved; returns false when nothing was kept. */
  sentence(raw: string): boolean {
    const markers = [...raw.matchAll(MARKER)];
    const ids = markers.flatMap((m) => idsOf(m[1]!));
    const known = ids.filter((id) => this.findings.has(id));
    const unknown = ids.filter((id) => !this.findings.has(id));
    if (unknown.length)
      this.problems.push(`removed citation marker(s) ${unknown.join(", ")}: no verified finding has that id`);
    if (ids.length > 0 && known.length === 0) {
      this.problems.push(
        `dropped a sentence whose only support was unverified: "${clip(stripMarkers(raw))}"`,
      );
      return false;
    }
    const base = this.text.length;
    // Adjacent markers ("[F1][F2]") close the same claim: one group.
    const groups: { start: number; end: number; ids: string[] }[] = [];
    for (const marker of markers) {
      const previous = groups.at(-1);
      if (previous && raw.slice(previous.end, marker.index).trim() === "") {
        previous.end = marker.index + marker[0].length;
        previous.ids.push(...idsOf(marker[1]!));
      } else {
        groups.push({ start: marker.index, end: marker.index + marker[0].length, ids: idsOf(marker[1]!) });
      }
    }
    let out = "";
    let segmentStart = 0;
    let last = 0;
    for (const group of groups) {
      out += raw.slice(last, group.start);
      last = group.end;
      const found = [...new Set(group.ids)]
        .map((id) => this.findings.get(id))
        .filter((f): f is Finding => f !== undefined);
      if (!found.length) continue;
      // The claim this marker closes: from the previous marker (or the sentence start) to here.
      const [start, end] = trimSpan(out, segmentStart, out.length);
      const [spanStart, spanEnd] = start < end ? [start, end] : trimSpan(out, 0, out.length);
      const numbers = [...new Set(found.map((f) => this.sourceNumber(f)))];
      out = out.replace(/\s+$/, "");
      const trailing = out.length;
      out += ` ${numbers.map((n) => `[${n}]`).join("")}`;
      for (const finding of found) this.cite(finding, base + spanStart, base + Math.min(spanEnd, trailing));
      segmentStart = out.length;
    }
    out += raw.slice(last);
    out = out.trimEnd();
    if (!out) return false;
    this.text += out;
    return true;
  }
}

const MARKER = /\s*\[((?:[A-Za-z]+\d+)(?:\s*[,;]\s*[A-Za-z]+\d+)*)\]/g;
const PLACEHOLDER = /\{([A-Za-z]+\d+)\}/g;
const idsOf = (group: string) => group.split(/\s*[,;]\s*/).map((id) => id.trim().toUpperCase());
const stripMarkers = (text: string) => text.replace(MARKER, "").trim();
const clip = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function trimSpan(text: string, start: number, end: number): [number, number] {
  let s = start;
  let e = end;
  while (s < e && /[\s,;]/.test(text[s]!)) s++;
  while (e > s && /\s/.test(text[e - 1]!)) e--;
  return [s, e];
}

/** Splits a paragraph after sentence ends (and any markers that follow them). */
function sentences(paragraph: string): string[] {
  return paragraph
    .split(/(?<=[.!?](?:\s*\[[A-Za-z0-9,;\s]+\])*)\s+(?=\S)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Assembles the final report. `derived` maps placeholder ids to their checked display
 * text; a placeholder missing from it failed its check (or was never declared).
 */
export function assembleReport(
  draft: WriteOutput,
  query: string,
  findings: ReadonlyMap<string, Finding>,
  derived: ReadonlyMap<string, string>,
): Report {
  const b = new Builder(findings);
  b.text = `# ${(draft.title ?? "").trim() || query}`;
  for (const section of draft.sections) {
    const heading = (section.heading ?? "").trim();
    const paragraphs: string[] = [];
    for (const paragraph of section.paragraphs) {
      const kept: string[] = [];
      for (const sentence of sentences(paragraph)) {
        const missing = [...sentence.matchAll(PLACEHOLDER)]
          .map((m) => m[1]!.toUpperCase())
          .filter((id) => !derived.has(id));
        if (missing.length) {
          b.problems.push(
            `dropped a sentence that used the unchecked number ${missing.map((id) => `{${id}}`).join(", ")}`,
          );
          continue;
        }
        kept.push(sentence.replace(PLACEHOLDER, (_, id: string) => derived.get(id.toUpperCase())!));
      }
      if (kept.length) paragraphs.push(kept.join(" "));
    }
    if (!paragraphs.length) continue;
    if (heading) b.text += `\n\n## ${heading}`;
    for (const paragraph of paragraphs) {
      const before = b.text;
      b.text += "\n\n";
      let any = false;
      for (const sentence of sentences(paragraph)) {
        if (any) b.text += " ";
        const kept = b.sentence(sentence);
        if (!kept && any) b.text = b.text.slice(0, -1);
        any ||= kept;
      }
      if (!any) b.text = before;
    }
  }
  if (!b.text.endsWith("\n")) b.text += "\n";
  return { text: b.text, citations: b.citations, problems: b.problems };
}

/**
 * The report rendered without a model when the loop stops early (budget, deadline,
 * malformed draft): the checked findings, then quotations whose support was not checked.
 */
export function renderPartial(
  query: string,
  reason: string,
  checked: readonly Finding[],
  unchecked: readonly Finding[],
): Report {
  const all = new Map([...checked, ...unchecked].map((f) => [f.id, f]));
  const b = new Builder(all);
  b.text = `# Partial report: ${query}\n\nThis report is partial: ${reason}. It lists only what was established before the research stopped; the gaps say what is missing.`;
  if (checked.length) {
    b.text += "\n\n## Verified findings\n";
    for (const finding of checked) {
      b.text += "\n- ";
      b.sentence(`${finding.claim.replace(/\s*\[[^\]]*\]\s*$/, "")} [${finding.id}]`);
    }
  }
  if (unchecked.length) {
    b.text += "\n\n## Quoted but not yet checked for support\n";
    for (const finding of unchecked) {
      b.text += "\n- ";
      b.sentence(`"${finding.quote}" [${finding.id}]`);
    }
  }
  if (!checked.length && !unchecked.length)
    b.text += "\n\nNo finding was verified before the research stopped.";
  if (!b.text.endsWith("\n")) b.text += "\n";
  return { text: b.text, citations: b.citations, problems: b.problems };
}

/** Splits the report into streamable chunks (paragraphs) whose concatenation is the report. */
export function chunks(text: string): string[] {
  const parts = text.split(/(?<=\n\n)/);
  return parts.filter((p) => p.length > 0);
}
