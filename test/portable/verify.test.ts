import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { htmlToText } from "../../providers/portable/index.js";
import { assembleReport, type Finding } from "../../providers/portable/report.js";
import { checkDerived, checkQuote } from "../../providers/portable/verify.js";
import type { DerivedNumber } from "../../providers/portable/wire/model-output.js";

const source =
  "Cycling count 2024\n\nIn 2024 the automatic counter on the river bridge recorded an average of 1,250 bicycle commuters per weekday. In 2023 the same counter recorded an average of 1,000 bicycle commuters per weekday.";

describe("quotation check", () => {
  it("accepts an exact quotation, across line breaks and typographic quotes", () => {
    expect(
      checkQuote(
        "In 2024 the automatic counter on the river bridge recorded an average of 1,250 bicycle commuters",
        source,
      ),
    ).toEqual({ ok: true });
    expect(
      checkQuote("Cycling count 2024 In 2024 the automatic counter on the river bridge", source),
    ).toEqual({ ok: true });
    expect(
      checkQuote(
        "“the lane’s counter — installed in 2019 — never stopped”",
        'He said: "the lane\'s counter - installed in 2019 - never stopped".',
      ),
    ).toEqual({ ok: true });
  });

  it("rejects a paraphrase, a changed number and a fragment too short to be evidence", () => {
    expect(
      checkQuote(
        "In 2024 the counter on the river bridge recorded an average of 1,250 bicycle commuters",
        source,
      ),
    ).toEqual({
      ok: false,
      reason: "not found verbatim in the source",
    });
    expect(
      checkQuote(
        "In 2024 the automatic counter on the river bridge recorded an average of 1,205 bicycle commuters",
        source,
      ).ok,
    ).toBe(false);
    // Exact means exact: a change of case (a proper name, an acronym) is not the source's wording.
    expect(
      checkQuote(
        "in 2024 the Automatic Counter on the River Bridge recorded an average of 1,250 bicycle commuters",
        source,
      ),
    ).toEqual({ ok: false, reason: "not found verbatim in the source" });
    expect(checkQuote("1,250 bicycle commuters", source)).toEqual({
      ok: false,
      reason: "too short to be evidence (needs 5 words, 25 characters)",
    });
  });

  it("rejects a quotation that starts or ends inside a word or number of the source", () => {
    expect(checkQuote("250 bicycle commuters per weekday. In 2023 the same counter", source)).toEqual({
      ok: false,
      reason: "found only inside a longer word or number in the source",
    });
    expect(checkQuote("utomatic counter on the river bridge recorded an average", source).ok).toBe(false);
    expect(checkQuote("the automatic counter on the river bridge recorded an average of 1", source).ok).toBe(
      false,
    );
    // A later, whole occurrence of the same words still counts.
    expect(
      checkQuote(
        "bridge recorded an average of 10 riders",
        "bridge recorded an average of 100 riders; bridge recorded an average of 10 riders",
      ).ok,
    ).toBe(true);
  });
});

const quotes = new Map([
  [
    "F1",
    "In 2024 the automatic counter on the river bridge recorded an average of 1,250 bicycle commuters per weekday.",
  ],
  ["F2", "In 2023 the same counter recorded an average of 1,000 bicycle commuters per weekday."],
  ["F3", "The city spent $2.5 million on the lane, or 12.5 percent of its 2023 cycling budget."],
]);
const derived = (patch: Partial<DerivedNumber>): DerivedNumber => ({
  id: "N1",
  formula: "(a - b) / b * 100",
  inputs: {
    a: { finding: "F1", value: 1250, date: "2024" },
    b: { finding: "F2", value: 1000, date: "2023" },
  },
  result: 25,
  unit: "%",
  ...patch,
});

describe("derived number check", () => {
  it("accepts inputs found in their quotes and arithmetic that holds to the stated precision", () => {
    expect(checkDerived(derived({}), quotes)).toEqual({ ok: true, value: 25, unit: "%" });
    expect(checkDerived(derived({ formula: "a / b", result: "1.25", unit: "x" }), quotes)).toMatchObject({
      ok: true,
    });
    expect(checkDerived(derived({ formula: "a - b", result: 250, unit: "" }), quotes)).toMatchObject({
      ok: true,
    });
    expect(
      checkDerived(
        {
          id: "N2",
          formula: "m / p * 100",
          inputs: {
            m: { finding: "F3", value: 2.5, unit: "$" },
            p: { finding: "F3", value: 12.5, unit: "percent" },
          },
          result: 20,
          unit: "usd/%",
        },
        quotes,
      ),
    ).toMatchObject({ ok: true });
  });

  it("rejects a number computed from literals alone, with or without declared inputs", () => {
    const reason = "the formula uses none of its inputs, so nothing checked supports it";
    expect(checkDerived(derived({ formula: "42", inputs: {}, result: 42, unit: "" }), quotes)).toEqual({
      ok: false,
      reason,
    });
    expect(checkDerived(derived({ formula: "(1300 - 1000) / 1000 * 100" }), quotes)).toEqual({
      ok: false,
      reason,
    });
  });

  it("rejects wrong arithmetic (at the stated precision), a value or date not in the quote, and mismatched units", () => {
    expect(checkDerived(derived({ result: 30 }), quotes)).toEqual({
      ok: false,
      reason: "the arithmetic does not hold: (a - b) / b * 100 = 25, not 30",
    });
    expect(checkDerived(derived({ formula: "a / b", result: "1.4", unit: "" }), quotes)).toMatchObject({
      ok: false,
    });
    expect(
      checkDerived(
        derived({ inputs: { a: { finding: "F1", value: 1300 }, b: { finding: "F2", value: 1000 } } }),
        quotes,
      ),
    ).toEqual({
      ok: false,
      reason: "input a = 1300 does not appear in the quote of F1",
    });
    expect(
      checkDerived(
        derived({
          inputs: { a: { finding: "F1", value: 1250, date: "2022" }, b: { finding: "F2", value: 1000 } },
        }),
        quotes,
      ),
    ).toEqual({
      ok: false,
      reason: 'the date "2022" of input a is not in the quote of F1',
    });
    expect(
      checkDerived(
        derived({
          inputs: { a: { finding: "F1", value: 1250, unit: "km" }, b: { finding: "F2", value: 1000 } },
        }),
        quotes,
      ),
    ).toEqual({
      ok: false,
      reason: 'the unit "km" of input a is not in the quote of F1',
    });
    expect(
      checkDerived(
        {
          id: "N3",
          formula: "m + p",
          inputs: {
            m: { finding: "F3", value: 2.5, unit: "$" },
            p: { finding: "F3", value: 12.5, unit: "%" },
          },
          result: 15,
          unit: "$",
        },
        quotes,
      ),
    ).toEqual({ ok: false, reason: 'units do not match in +: "usd" and "%"' });
    expect(checkDerived(derived({ unit: "" }), quotes)).toEqual({
      ok: false,
      reason: 'the result unit "" does not follow from the inputs (expected "%")',
    });
    expect(checkDerived(derived({ formula: "a - c" }), quotes)).toEqual({
      ok: false,
      reason: 'the formula uses "c", which is not one of its inputs',
    });
    expect(checkDerived(derived({ inputs: { a: { finding: "F9", value: 1 } } }), quotes)).toMatchObject({
      ok: false,
    });
  });
});

describe("report assembly", () => {
  const findings = new Map<string, Finding>([
    ["F1", { id: "F1", source: "S1", url: "https://a.example/1", title: "A", claim: "c1", quote: "q1" }],
    ["F2", { id: "F2", source: "S2", url: "https://b.example/2", title: "B", claim: "c2", quote: "q2" }],
  ]);

  it("numbers sources, places citations on the claims they close, and drops unsupported sentences", () => {
    const report = assembleReport(
      {
        title: "Bridge",
        sections: [
          {
            heading: "Findings",
            paragraphs: [
              "Counts rose [F1], and the lane opened in May 2023 [F2][F1]. This is invented [F7]. Context without a source.",
            ],
          },
        ],
      },
      "q",
      findings,
      new Map(),
    );
    expect(report.text).toBe(
      "# Bridge\n\n## Findings\n\nCounts rose [1], and the lane opened in May 2023 [2][1]. Context without a source.\n",
    );
    const spans = report.citations.map((c) => [c.findingId, report.text.slice(c.startIndex, c.endIndex)]);
    expect(spans).toEqual([
      ["F1", "Counts rose"],
      ["F2", "and the lane opened in May 2023"],
      ["F1", "and the lane opened in May 2023"],
    ]);
    expect(report.problems).toEqual([
      "removed citation marker(s) F7: no verified finding has that id",
      'dropped a sentence whose only support was unverified: "This is invented."',
    ]);
  });

  it("counts offsets in UTF-16 code units, whatever the characters", () => {
    const report = assembleReport(
      { title: "Ünïcødé 🚲", sections: [{ paragraphs: ["Le café 🚲 a ouvert [F1]."] }] },
      "q",
      findings,
      new Map(),
    );
    const [citation] = report.citations;
    expect(report.text.slice(citation!.startIndex, citation!.endIndex)).toBe("Le café 🚲 a ouvert");
  });
});

describe("HTML to text", () => {
  it("keeps the readable text and drops scripts, styles and page chrome", () => {
    const html = readFileSync(new URL("../fixtures/portable/page.html", import.meta.url), "utf8");
    const text = htmlToText(html);
    expect(text).toBe(
      "Cycling count 2024\n\nIn 2024 the automatic counter on the river bridge recorded an average of 1,250 bicycle commuters per weekday.\n\nIn 2023 the same counter recorded an average of 1,000 bicycle commuters per weekday \u2014 the lane opened in May 2023.\n\nCounter installed: March 2019\n\nData licence: CC\u2011BY 4.0",
    );
  });
});
