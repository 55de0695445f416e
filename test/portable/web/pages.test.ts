/** Page numbers of paged sources survive the corpus: trimming, the byte cap, and quote lookup. */
import { describe, expect, it } from "vitest";
import { Corpus, pageOf } from "../../../providers/portable/corpus.js";

const PAGES = [
  "Annual cycling report 2024, prepared by the city statistics office.",
  "In 2024 the river bridge counter recorded 1,250 bicycle commuters per weekday.",
  "Appendix: the counter was out of service for 12 days in March 2024.",
];
const text = `\n  ${PAGES.join("\n\n")}`;
const starts = PAGES.map((_, i) => 3 + PAGES.slice(0, i).reduce((n, p) => n + p.length + 2, 0));

describe("paged sources in the corpus", () => {
  it("finds the page that holds a quotation, after the text was trimmed", () => {
    const corpus = new Corpus();
    corpus.add("https://example.org/report.pdf", "Report", text, { extraction: "pdf", pageStarts: starts });
    const source = corpus.sources[0]!;
    expect(source.pageStarts).toEqual(starts.map((s) => s - 3));
    expect(pageOf(source, "the river bridge counter recorded 1,250 bicycle commuters per weekday")).toBe(2);
    expect(pageOf(source, "the counter was out of service for 12 days in March 2024")).toBe(3);
    // Across a page break there is no single page to name.
    expect(pageOf(source, "statistics office. In 2024 the river bridge counter")).toBeUndefined();
  });

  it("drops the pages the byte cap cut off", () => {
    const corpus = new Corpus(100);
    corpus.add("https://example.org/report.pdf", "Report", text, { pageStarts: starts });
    expect(corpus.sources[0]!.pageStarts).toEqual([0, starts[1]! - 3]);
  });
});
