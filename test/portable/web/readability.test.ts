/**
 * Main-content extraction on real pages: Mozilla Readability's own test pages (source
 * HTML and expected article, see test/fixtures/portable/readability/README.md), served by
 * a loopback server and read by the default fetcher into the corpus.
 */
import { readFileSync } from "node:fs";
import { parseHTML } from "linkedom";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Corpus } from "../../../providers/portable/corpus.js";
import { defaultFetcher } from "../../../providers/portable/index.js";
import { checkQuote, normalizeText } from "../../../providers/portable/verify.js";
import { type Loopback, startLoopback } from "../../helpers/loopback.js";
import { guardConnections } from "./guard.js";

guardConnections();
const fixture = (path: string) =>
  readFileSync(new URL(`../../fixtures/portable/readability/${path}`, import.meta.url), "utf8");

/** Per page: text of its chrome (navigation, sharing, comments, sidebars) that is not article. */
const pages: Record<string, string[]> = {
  "daringfireball-1": ["Display Preferences", "The Talk Show"],
  "001": ["Home Code Photography Talks", "Tweet at me"],
  "v8-blog": ["Show navigation", "Edit this page on GitHub"],
  "simplyfound-1": ["Featured Popular Latest Login"],
  "medium-2": ["Sign in / Sign up", "Yes, show me sharing options"],
  "ars-1": ["Sign up or login to join the discussions!", "Share on Reddit"],
};

const NOT_AN_ARTICLE = `<html><head><title>Links</title><link rel="canonical" href="/links?sort=new"></head><body>
<nav><a href="/">Home</a> <a href="/about">About us and our team</a></nav>
<ul><li><a href="/a">Bridge counter data, 2019 to 2024</a></li><li><a href="/b">Cycling lanes map</a></li></ul>
<footer>Copyright 2025 City statistics office</footer></body></html>`;

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback((request, response) => {
    const name = request.url.slice(1);
    const html =
      name === "links" ? NOT_AN_ARTICLE : name in pages ? fixture(`${name}/source.html`) : undefined;
    if (html === undefined) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
});
afterAll(() => server.close());

const read = (name: string) =>
  defaultFetcher({ allowHosts: ["127.0.0.1"], robots: false }).fetch(`${server.url}/${name}`, {
    signal: new AbortController().signal,
  });

describe("default fetcher: main content of real pages (Readability test pages)", () => {
  for (const [name, chrome] of Object.entries(pages)) {
    it(`${name}: keeps the article and its metadata, drops the chrome`, async () => {
      const page = await read(name);
      const expected = parseHTML(`<body>${fixture(`${name}/expected.html`)}</body>`).document;
      const metadata = JSON.parse(fixture(`${name}/expected-metadata.json`)) as Record<string, string | null>;

      expect(page.extraction).toBe("article");
      expect(page.title).toBe(metadata.title);
      expect(page.byline).toBe(metadata.byline ?? undefined);
      expect(page.publishedAt).toBe(metadata.publishedTime ?? undefined);

      // The stored source holds the expected article's longest paragraph verbatim.
      const corpus = new Corpus();
      const added = corpus.add(page.url, page.title, page.text);
      expect(added.kind).toBe("added");
      const stored = corpus.sources[0]!.text;
      const paragraphs = [...expected.querySelectorAll("p")].map((p) => normalizeText(p.textContent ?? ""));
      const quote = paragraphs.sort((a, b) => b.length - a.length)[0]!;
      expect(quote.length).toBeGreaterThan(100);
      expect(checkQuote(quote, stored)).toEqual({ ok: true });

      // Paragraphs stay apart: the article keeps its block structure.
      expect(stored.split("\n\n").length).toBeGreaterThan(3);

      const sourceText = normalizeText(
        parseHTML(fixture(`${name}/source.html`)).document.body?.textContent ?? "",
      );
      for (const text of chrome) {
        expect(sourceText, `${name} has "${text}"`).toContain(text);
        expect(normalizeText(stored), `"${text}" was dropped`).not.toContain(text);
      }
    });
  }

  it("ars-1: records the canonical URL, absolute", async () => {
    const page = await read("ars-1");
    expect(page.canonicalUrl).toMatch(/^https?:\/\/arstechnica\.com\//);
  });

  it("falls back to the whole page where no article is found, and says so", async () => {
    const page = await read("links");
    expect(page.extraction).toBe("whole-page");
    expect(page.text).toBe("Bridge counter data, 2019 to 2024\n\nCycling lanes map");
    expect(page.title).toBe("Links");
    expect(page.canonicalUrl).toBe(`${server.url}/links?sort=new`);
  });
});
