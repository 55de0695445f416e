/**
 * The default fetcher's work, loaded lazily: every hop (the first request and each
 * redirect) is checked before it connects — address, then robots.txt — and sent through
 * a transport that reaches only the checked address. The body is read within caps and
 * turned into text: HTML by its main content, PDFs page by page, text by its charset.
 */
import type { FetchedPage, Fetcher } from "../types.js";
import { extractHtml } from "./article.js";
import { decodeBody } from "./charset.js";
import { HostLimiter } from "./hosts.js";
import { pdfText } from "./pdf.js";
import { RobotsRules } from "./robots.js";
import { checkTarget, type HostLookup, hostKey } from "./target.js";
import type { PageTransport } from "./transport.js";

export interface PageSettings {
  allowHosts: readonly string[];
  lookup: HostLookup | undefined;
  transport: PageTransport;
  maxRedirects: number;
  maxBytes: number;
  timeoutMs: number;
  robots: boolean;
  perHostConcurrency: number;
  userAgent: string;
  robotsAgent: string;
}

/** A URL the fetcher would not reach; the loop reports it as a gap naming the URL and reason. */
export class FetchRefusedError extends Error {
  override name = "FetchRefused";
}

const ROBOTS_MAX_BYTES = 512 * 1024;
const REDIRECT = new Set([301, 302, 303, 307, 308]);

type Kind = "html" | "xml" | "text" | "pdf";

function kindOf(contentType: string): Kind | undefined {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type === "application/pdf" || type === "application/x-pdf") return "pdf";
  if (type === "application/xml" || type === "text/xml" || type.endsWith("+xml")) return "xml";
  if (type.startsWith("text/") || type === "application/json" || type.endsWith("+json")) return "text";
  return undefined;
}

/** No content type: what the bytes say. */
function sniffKind(bytes: Uint8Array): Kind {
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 512)).trimStart().toLowerCase();
  if (head.startsWith("%pdf-")) return "pdf";
  if (/^(\ufeff|ï»¿)?\s*<(!doctype html|html|head|body)/.test(head)) return "html";
  return "text";
}

async function readCapped(
  response: Response,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let cut = false;
  if (response.body) {
    const reader = response.body.getReader();
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        cut = true;
        await reader.cancel().catch(() => {});
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, cut };
}

const discard = (response: Response) => response.body?.cancel().catch(() => {});

/** Reads one final (non-redirect) response into a page, by its content type or sniffed bytes. */
async function readPage(url: URL, response: Response, maxBytes: number): Promise<FetchedPage> {
  if (!response.ok) {
    await discard(response);
    throw new Error(`HTTP ${response.status} ${response.statusText}`.trim());
  }
  const contentType = response.headers.get("content-type") ?? "";
  // Many servers label PDFs as bare bytes: those are sniffed, and must be PDFs.
  const opaque = !contentType || /^application\/octet-stream\b/i.test(contentType);
  let kind = opaque ? undefined : kindOf(contentType);
  if (!opaque && !kind) {
    await discard(response);
    throw new Error(`unsupported content type "${contentType}" (read are HTML, text, JSON, XML and PDF)`);
  }
  const declared = Number(response.headers.get("content-length"));
  if (kind === "pdf" && declared > maxBytes) {
    await discard(response);
    throw new Error(`the PDF is ${declared} bytes, over the fetcher's maxBytes (${maxBytes})`);
  }
  const { bytes, cut } = await readCapped(response, maxBytes);
  kind ??= sniffKind(bytes);
  if (contentType && opaque && kind !== "pdf")
    throw new Error(`unsupported content type "${contentType}" (the bytes are not a PDF)`);
  const base = { url: url.href, contentType: contentType || "application/octet-stream" };
  if (kind === "pdf") {
    if (cut) throw new Error(`the PDF is over the fetcher's maxBytes (${maxBytes})`);
    const pdf = await pdfText(bytes);
    return { ...base, text: pdf.text, title: pdf.title, extraction: "pdf", pageStarts: pdf.pageStarts };
  }
  // Text cut at the cap is still text; the corpus keeps far less anyway.
  const decoded = decodeBody(bytes, contentType, kind === "html" ? "html" : kind);
  if (kind !== "html") return { ...base, text: decoded.text, extraction: "text", encoding: decoded.encoding };
  const page = extractHtml(decoded.text, url.href);
  return { ...base, ...page, encoding: decoded.encoding };
}

export function createPageFetcher(settings: PageSettings): Fetcher {
  const allowHosts = new Set(settings.allowHosts.map(hostKey));
  const limiter = new HostLimiter(settings.perHostConcurrency);
  const headers = (accept: string) => ({ accept, "user-agent": settings.userAgent });

  /**
   * Follows redirects hop by hop; each hop is checked before its connection and runs
   * under the per-host limit until `consume` has read its response.
   */
  async function request<T>(
    start: URL,
    signal: AbortSignal,
    options: { accept: string; robots: boolean },
    consume: (url: URL, response: Response) => Promise<T>,
  ): Promise<T> {
    let url = start;
    for (let hop = 0; ; hop++) {
      const from = hop ? ` (redirected from ${start.href})` : "";
      const target = await checkTarget(url, { lookup: settings.lookup, allowHosts });
      if (!target.ok) throw new FetchRefusedError(`refused ${url.href}${from}: ${target.reason}`);
      if (options.robots && robots) {
        const disallowed = await robots.refusal(url, signal);
        if (disallowed) throw new FetchRefusedError(`not fetched ${url.href}${from}: ${disallowed}`);
      }
      const current = url;
      const outcome = await limiter.run(current.host, signal, async () => {
        const response = await settings.transport({
          url: current,
          address: target.address,
          headers: headers(options.accept),
          signal,
        });
        const location = REDIRECT.has(response.status) ? response.headers.get("location") : null;
        if (location === null) return { done: true as const, value: await consume(current, response) };
        await discard(response);
        return { done: false as const, next: new URL(location, current) };
      });
      if (outcome.done) return outcome.value;
      if (hop >= settings.maxRedirects)
        throw new Error(`more than ${settings.maxRedirects} redirects (the last to ${outcome.next.href})`);
      url = outcome.next;
    }
  }

  const robots = settings.robots
    ? new RobotsRules(
        (robotsUrl, signal) =>
          request(robotsUrl, signal, { accept: "text/plain", robots: false }, async (_url, response) => {
            if (!response.ok) {
              await discard(response);
              return { status: response.status, text: "" };
            }
            const { bytes } = await readCapped(response, ROBOTS_MAX_BYTES);
            return { status: response.status, text: decodeBody(bytes, "text/plain", "text").text };
          }),
        settings.robotsAgent,
      )
    : undefined;

  return {
    async fetch(raw, { signal }) {
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw new FetchRefusedError(`refused "${raw}": not a URL`);
      }
      const timeout = AbortSignal.timeout(settings.timeoutMs);
      const combined = AbortSignal.any([signal, timeout]);
      try {
        return await request(
          url,
          combined,
          {
            accept: "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.1",
            robots: true,
          },
          (pageUrl, response) => readPage(pageUrl, response, settings.maxBytes),
        );
      } catch (error) {
        if (timeout.aborted && !signal.aborted)
          throw new Error(`no complete answer within ${settings.timeoutMs / 1000} s`);
        throw error;
      }
    },
  };
}
