import { htmlToText, titleOf } from "./html.js";
import type { Fetcher } from "./types.js";

/** Bytes read from one page at most; the corpus keeps far less. */
const MAX_PAGE_BYTES = 5_000_000;
const PAGE_TIMEOUT_MS = 30_000;

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    text += decoder.decode(value, { stream: true });
    if (bytes >= MAX_PAGE_BYTES) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  return text + decoder.decode();
}

/**
 * The default fetcher: `fetch` (the client's), redirects followed, HTML converted to
 * text; plain text, Markdown, JSON and XML kept as they are; anything else (PDF, images)
 * is reported as unreadable.
 */
export function defaultFetcher(fetchImpl: typeof globalThis.fetch): Fetcher {
  return {
    async fetch(url, { signal }) {
      const response = await fetchImpl(url, {
        signal: AbortSignal.any([signal, AbortSignal.timeout(PAGE_TIMEOUT_MS)]),
        redirect: "follow",
        headers: {
          accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
          "user-agent": "Mozilla/5.0 (compatible; sonde-portable/0.1)",
        },
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
      }
      const contentType = response.headers.get("content-type") ?? "";
      const finalUrl = response.url || url;
      if (/html|xhtml/i.test(contentType) || (!contentType && /\.html?$/i.test(new URL(finalUrl).pathname))) {
        const html = await readCapped(response);
        return { url: finalUrl, text: htmlToText(html), contentType, title: titleOf(html) };
      }
      if (/^text\/|json|xml|markdown/i.test(contentType)) {
        return { url: finalUrl, text: await readCapped(response), contentType };
      }
      await response.body?.cancel().catch(() => {});
      throw new Error(`unsupported content type "${contentType || "unknown"}"`);
    },
  };
}
