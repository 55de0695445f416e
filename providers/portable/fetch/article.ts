/**
 * Main content of an HTML page: @mozilla/readability (Firefox Reader View) over a linkedom
 * DOM. The article keeps its block structure (one block per paragraph, heading, list item
 * or table row) so quotations stay within what a reader sees as one passage. A page with
 * no article falls back to the whole page's text, and says so.
 */
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";

export interface ExtractedHtml {
  text: string;
  title?: string | undefined;
  byline?: string | undefined;
  publishedAt?: string | undefined;
  canonicalUrl?: string | undefined;
  extraction: "article" | "whole-page";
}

/** Less article text than this (characters) is not an article: the whole page is kept. */
const MIN_ARTICLE_CHARS = 250;

const SKIP = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "iframe",
  "head",
  "button",
  "select",
  "canvas",
  "object",
]);
/** Page chrome, dropped from the whole-page fallback too. */
const CHROME = new Set(["nav", "footer", "form", "aside", "dialog"]);
const BLOCK = new Set([
  "address",
  "article",
  "blockquote",
  "dd",
  "details",
  "div",
  "dl",
  "dt",
  "figcaption",
  "figure",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hr",
  "li",
  "main",
  "ol",
  "p",
  "pre",
  "section",
  "summary",
  "table",
  "tbody",
  "thead",
  "tfoot",
  "tr",
  "ul",
  "caption",
]);

interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
}

/** Text of a DOM subtree, one block per line group; `pre` keeps its line breaks. */
function blockText(root: DomNode, dropChrome: boolean): string {
  const blocks: string[] = [];
  let line = "";
  const flush = () => {
    const text = line.replace(/[ \t\f\v\r\n\u00A0]+/g, " ").trim();
    if (text) blocks.push(text);
    line = "";
  };
  const walk = (node: DomNode, pre: boolean) => {
    if (node.nodeType === 3) {
      line += pre ? (node.textContent ?? "").replace(/\n/g, "\u2028") : (node.textContent ?? "");
      return;
    }
    if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
    const name = node.nodeName.toLowerCase();
    if (SKIP.has(name) || (dropChrome && CHROME.has(name))) return;
    if (name === "br") {
      line += "\u2028";
      return;
    }
    const block = BLOCK.has(name);
    if (block) flush();
    if (name === "td" || name === "th") line += " ";
    for (const child of Array.from(node.childNodes)) walk(child, pre || name === "pre");
    if (block) flush();
  };
  walk(root, false);
  flush();
  // Line breaks inside a block (from <br> or <pre>) survive as single newlines.
  return blocks
    .map((b) => b.replace(/\u2028/g, "\n").replace(/ *\n */g, "\n"))
    .join("\n\n")
    .trim();
}

const clean = (value: string | null | undefined) => {
  const text = value?.replace(/\s+/g, " ").trim();
  return text || undefined;
};

function canonicalOf(document: Document, pageUrl: string): string | undefined {
  const href = document.querySelector('link[rel~="canonical" i]')?.getAttribute("href")?.trim();
  if (!href) return undefined;
  try {
    const url = new URL(href, pageUrl);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export function extractHtml(html: string, pageUrl: string): ExtractedHtml {
  const { document } = parseHTML(html);
  const canonicalUrl = canonicalOf(document, pageUrl);
  const pageTitle = clean(document.querySelector("title")?.textContent);
  let article: ReturnType<Readability<string>["parse"]> = null;
  try {
    article = new Readability(document, { charThreshold: MIN_ARTICLE_CHARS }).parse();
  } catch {
    article = null; // An odd page is still read: as a whole.
  }
  if (article?.content) {
    const text = blockText(
      parseHTML(`<body>${article.content}</body>`).document as unknown as DomNode,
      false,
    );
    if (text.length >= MIN_ARTICLE_CHARS)
      return {
        text,
        title: clean(article.title) ?? pageTitle,
        byline: clean(article.byline),
        publishedAt: clean(article.publishedTime),
        canonicalUrl,
        extraction: "article",
      };
  }
  // Readability changed the first DOM: read the page anew.
  const whole = parseHTML(html).document;
  const body = (whole.body ?? whole) as unknown as DomNode;
  return { text: blockText(body, true), title: pageTitle, canonicalUrl, extraction: "whole-page" };
}
