/**
 * The retained corpus: source texts the findings are checked against. Identical text
 * counts once, and the whole corpus is capped in UTF-8 bytes; what does not fit is cut
 * (and reported by the caller as a `corpus-limit` gap).
 */

import { utf8Length } from "../../src/text-offsets.js";
import type { FetchedPage } from "./types.js";
import { checkQuote, normalizeText } from "./verify.js";

/** Retained corpus cap, in UTF-8 bytes (ARCHITECTURE.md, "The portable engine"). */
export const CORPUS_CAP_BYTES = 60_000;

/** What the fetcher said about how a source's text was made (see `FetchedPage`). */
export type SourceMeta = Pick<
  FetchedPage,
  "extraction" | "byline" | "publishedAt" | "canonicalUrl" | "encoding" | "pageStarts"
>;

export interface Source extends SourceMeta {
  /** `S1`, `S2`, … in the order sources were added. */
  id: string;
  url: string;
  title?: string | undefined;
  text: string;
}

/** The 1-based page (of a PDF source) that holds `quote` whole, if the source has pages. */
export function pageOf(source: Source, quote: string): number | undefined {
  const starts = source.pageStarts;
  if (!starts?.length) return undefined;
  for (const [i, start] of starts.entries()) {
    const page = source.text.slice(start, starts[i + 1] ?? source.text.length);
    if (checkQuote(quote, page).ok) return i + 1;
  }
  return undefined;
}

export type AddOutcome =
  | { kind: "added"; source: Source; droppedBytes: number; originalBytes: number }
  | { kind: "duplicate"; of: Source }
  | { kind: "full"; droppedBytes: number };

/** The longest prefix of `text` that fits in `bytes` UTF-8 bytes, never splitting a character. */
export function truncateUtf8(text: string, bytes: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    const width = utf8Length(char);
    if (used + width > bytes) break;
    used += width;
    end += char.length;
  }
  return text.slice(0, end);
}

/** 53-bit FNV-style hash: enough to spot identical texts in one job. */
function fingerprint(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

export class Corpus {
  readonly sources: Source[] = [];
  #bytes = 0;
  #seen = new Map<string, Source>();

  constructor(readonly capBytes: number = CORPUS_CAP_BYTES) {}

  get bytes(): number {
    return this.#bytes;
  }

  add(url: string, title: string | undefined, rawText: string, meta: SourceMeta = {}): AddOutcome {
    const text = rawText.trim();
    const lead = rawText.length - rawText.trimStart().length;
    const key = fingerprint(normalizeText(text));
    const known = this.#seen.get(key);
    if (known) return { kind: "duplicate", of: known };
    const originalBytes = utf8Length(text);
    const room = this.capBytes - this.#bytes;
    if (room <= 0) return { kind: "full", droppedBytes: originalBytes };
    const kept = originalBytes > room ? truncateUtf8(text, room) : text;
    const keptBytes = utf8Length(kept);
    // Page offsets follow the trim and the cut: a page that was cut off is gone.
    const pageStarts = meta.pageStarts
      ?.map((start) => Math.max(0, start - lead))
      .filter((start, i) => i === 0 || start < kept.length);
    const source: Source = {
      ...meta,
      ...(pageStarts && { pageStarts }),
      id: `S${this.sources.length + 1}`,
      url,
      title,
      text: kept,
    };
    this.sources.push(source);
    this.#seen.set(key, source);
    this.#bytes += keptBytes;
    return { kind: "added", source, droppedBytes: originalBytes - keptBytes, originalBytes };
  }

  get(id: string): Source | undefined {
    return this.sources.find((s) => s.id === id);
  }
}
