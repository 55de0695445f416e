/**
 * A PDF's text layer, page by page (pdf.js through unpdf: no native code). The pages are
 * joined with blank lines and `pageStarts` records where each begins, so a quotation can
 * name its page. A PDF whose pages carry no text (a scan) is unreadable, and says why.
 */
import { extractText, getDocumentProxy, getMeta } from "unpdf";

export interface PdfText {
  text: string;
  /** UTF-16 offset in `text` where page n (1-based) starts: `pageStarts[n - 1]`. */
  pageStarts: number[];
  title?: string | undefined;
}

export async function pdfText(bytes: Uint8Array): Promise<PdfText> {
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js takes ownership of the buffer it is given; its warnings would go to the console.
    document = await getDocumentProxy(bytes.slice(), { verbosity: 0 });
  } catch (error) {
    throw new Error(`the PDF could not be parsed (${(error as Error).message})`);
  }
  try {
    const { totalPages, text: pages } = await extractText(document, { mergePages: false });
    const pageStarts: number[] = [];
    let text = "";
    for (const page of pages) {
      if (text) text += "\n\n";
      pageStarts.push(text.length);
      text += page.replace(/[ \t]+\n/g, "\n").trim();
    }
    if (!text.replace(/\s+/g, "")) {
      throw new Error(
        `the PDF has no text layer (${totalPages} page(s), likely scanned images); run OCR on it and pass the text as sources.documents`,
      );
    }
    const meta = await getMeta(document).catch(() => undefined);
    const title = typeof meta?.info.Title === "string" ? meta.info.Title.trim() || undefined : undefined;
    return { text, pageStarts, title };
  } finally {
    await document.cleanup().catch(() => {});
  }
}

/** The 1-based page of `pageStarts` on which `offset` lies. */
export function pageAt(pageStarts: readonly number[], offset: number): number {
  let page = 1;
  for (const [i, start] of pageStarts.entries()) if (start <= offset) page = i + 1;
  return page;
}
