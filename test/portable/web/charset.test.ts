/** Pages in legacy encodings, served as real bytes: the stored text quotes them exactly. */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultFetcher } from "../../../providers/portable/index.js";
import { checkQuote } from "../../../providers/portable/verify.js";
import { type Loopback, startLoopback } from "../../helpers/loopback.js";
import { guardConnections } from "./guard.js";

guardConnections();
const bytesOf = (name: string) =>
  readFileSync(new URL(`../../fixtures/portable/charsets/${name}`, import.meta.url));
const quotes = JSON.parse(bytesOf("quotes.json").toString("utf8")) as { fr: string; ja: string; zh: string };

/** path → [file, content-type header] */
const routes: Record<string, [string, string]> = {
  "/fr": ["windows-1252.html", "text/html; charset=windows-1252"],
  "/ja": ["shift_jis.html", "text/html"],
  "/zh": ["gb18030.html", "text/html"],
  "/undeclared": ["undeclared-1252.html", "text/html"],
  "/bom": ["bom-utf8.html", "text/html; charset=iso-8859-1"],
  "/plain": ["windows-1252.html", "text/plain; charset=windows-1252"],
};

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback((request, response) => {
    const route = routes[request.url];
    if (!route) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": route[1] }).end(bytesOf(route[0]));
  });
});
afterAll(() => server.close());

const fetcher = () => defaultFetcher({ allowHosts: ["127.0.0.1"], robots: false });
const read = (path: string) =>
  fetcher().fetch(`${server.url}${path}`, { signal: new AbortController().signal });

describe("default fetcher: charsets", () => {
  const cases = [
    ["/fr", "windows-1252", "fr", "HTTP charset"],
    ["/ja", "Shift_JIS", "ja", "<meta charset>"],
    ["/zh", "gb18030", "zh", "<meta http-equiv>"],
  ] as const;
  for (const [path, encoding, quote, how] of cases) {
    it(`decodes ${encoding} declared by ${how}, so a quotation from it is exact`, async () => {
      const page = await read(path);
      expect(page.encoding).toBe(encoding);
      expect(page.text).toContain(quotes[quote]);
      expect(checkQuote(quotes[quote], page.text)).toEqual({ ok: true });
      // The same bytes read as UTF-8 would not hold the quotation.
      expect(new TextDecoder().decode(bytesOf(routes[path]![0]))).not.toContain(quotes[quote]);
    });
  }

  it("reads the titles in their encodings too", async () => {
    expect((await read("/ja")).title).toBe("自転車通勤");
    expect((await read("/zh")).title).toBe("自行车通勤");
  });

  it("lets a byte-order mark win over a wrong HTTP charset", async () => {
    const page = await read("/bom");
    expect(page.encoding).toBe("UTF-8");
    expect(page.text).toContain(quotes.ja);
  });

  it("reads undeclared bytes that are not UTF-8 as windows-1252", async () => {
    const page = await read("/undeclared");
    expect(page.encoding).toBe("windows-1252");
    expect(page.text).toContain(quotes.fr);
  });

  it("decodes plain text by its HTTP charset", async () => {
    const page = await read("/plain");
    expect(page.extraction).toBe("text");
    expect(page.text).toContain(quotes.fr);
  });
});
