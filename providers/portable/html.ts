/**
 * A small HTML-to-text conversion: enough to quote from articles and docs pages. Drops
 * scripts, styles and page chrome, keeps block structure as line breaks, decodes entities.
 */

const named: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ndash: "\u2013",
  mdash: "\u2014",
  hellip: "\u2026",
  lsquo: "\u2018",
  rsquo: "\u2019",
  ldquo: "\u201C",
  rdquo: "\u201D",
  copy: "\u00A9",
  reg: "\u00AE",
  trade: "\u2122",
  deg: "\u00B0",
  euro: "\u20AC",
  pound: "\u00A3",
  times: "\u00D7",
  middot: "\u00B7",
  bull: "\u2022",
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, entity: string) => {
    if (entity[0] === "#") {
      const code =
        entity[1] === "x" || entity[1] === "X"
          ? Number.parseInt(entity.slice(2), 16)
          : Number(entity.slice(1));
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return named[entity.toLowerCase()] ?? match;
  });
}

const DROP = ["script", "style", "noscript", "template", "svg", "iframe", "head", "nav", "footer", "form"];
const BLOCK =
  /<\/?(p|div|br|hr|li|ul|ol|h[1-6]|tr|td|th|table|section|article|header|main|aside|blockquote|pre|dd|dt|dl|figure|figcaption)\b[^>]*>/gi;

export function titleOf(html: string): string | undefined {
  const match = html.match(/<title[^>]*>([\s\S]*?)<\/title>/i);
  const title = match ? decodeEntities(match[1]!.replace(/\s+/g, " ").trim()) : "";
  return title || undefined;
}

/**
 * Readable text of an HTML document.
 * @example
 * ```ts
 * import { htmlToText } from "sonde/providers/portable";
 *
 * const text = htmlToText("<h1>Title</h1><p>First <b>paragraph</b>.</p>"); // the words, no tags
 * ```
 */
export function htmlToText(html: string): string {
  let text = html.replace(/<!--[\s\S]*?-->/g, " ");
  for (const tag of DROP) text = text.replace(new RegExp(`<${tag}\\b[\\s\\S]*?<\\/${tag}\\s*>`, "gi"), " ");
  text = text.replace(BLOCK, "\n").replace(/<[^>]*>/g, "");
  text = decodeEntities(text);
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\u00A0]+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
