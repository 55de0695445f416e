/**
 * Mechanical checks: a quotation must appear verbatim in the stored source text, and a
 * derived number must follow from checked inputs (values, units and dates found in the
 * quotes) by arithmetic we redo ourselves. No model is trusted for any of this.
 */
import type { DerivedNumber } from "./wire/model-output.js";

/**
 * Normalizes only what copying text can change without changing its words: Unicode
 * form, typographic quotes and dashes, and runs of whitespace. Case and words are kept.
 */
export function normalizeText(text: string): string {
  return text
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u201A\u201B\u2032]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F\u2033]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/[\u00AD\u200B-\u200D\uFEFF]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Least a quotation must hold to count as evidence: words, not a fragment. */
const MIN_QUOTE_CHARS = 25;
const MIN_QUOTE_WORDS = 5;

export type QuoteCheck = { ok: true } | { ok: false; reason: string };

/** Checks that `quote` is substantive and appears verbatim in `source`. */
export function checkQuote(quote: string, source: string): QuoteCheck {
  const q = normalizeText(quote).replace(/^["']+|["']+$/g, "");
  const words = wordCount(q);
  if (q.length < MIN_QUOTE_CHARS || words < MIN_QUOTE_WORDS) {
    return {
      ok: false,
      reason: `too short to be evidence (needs ${MIN_QUOTE_WORDS} words, ${MIN_QUOTE_CHARS} characters)`,
    };
  }
  const text = normalizeText(source);
  let found = false;
  for (let at = text.indexOf(q); at >= 0; at = text.indexOf(q, at + 1)) {
    if (wholeAt(text, at, at + q.length)) return { ok: true };
    found = true;
  }
  return {
    ok: false,
    reason: found
      ? "found only inside a longer word or number in the source"
      : "not found verbatim in the source",
  };
}

/** Words of a quotation; Chinese and Japanese have no spaces, so their words are segmented. */
function wordCount(text: string): number {
  if (UNSPACED.test(text) && typeof Intl.Segmenter === "function")
    return [...new Intl.Segmenter(undefined, { granularity: "word" }).segment(text)].filter(
      (s) => s.isWordLike,
    ).length;
  return text.split(" ").filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
/** Scripts written without spaces between words: any character boundary is a word boundary. */
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const joined = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && WORD_CHAR.test(a) && WORD_CHAR.test(b) && !UNSPACED.test(a + b);
const DIGIT = /\d/;

/**
 * Whether `text.slice(start, end)` neither starts nor ends inside a word or a number: a
 * quotation cut from "1,250" as "250", or from "unemployment" as "employment", says
 * something the source does not.
 */
function wholeAt(text: string, start: number, end: number): boolean {
  const [before, first, last, after] = [text[start - 1], text[start], text[end - 1], text[end]];
  if (joined(before, first) || joined(last, after)) return false;
  // Digit groups and decimals: "1,250" and "12.5" are one number.
  if (first && DIGIT.test(first) && /[.,]/.test(before ?? "") && DIGIT.test(text[start - 2] ?? ""))
    return false;
  if (last && DIGIT.test(last) && /[.,]/.test(after ?? "") && DIGIT.test(text[end + 1] ?? "")) return false;
  return true;
}

// --- Numbers, units, dates ---

const NUMBER = /(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])/g;

/** Every number written in `text` (`1,200.5` → 1200.5). */
export function numbersIn(text: string): number[] {
  return [...normalizeText(text).matchAll(NUMBER)].map((m) => Number(m[0].replace(/,/g, "")));
}

/** Parses a number the model wrote (`20`, `"1,200.5"`, `"20%"`); undefined when it is not one. */
export function parseNumber(value: number | string): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  const match = value.trim().match(/^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?/);
  return match ? Number(match[0].replace(/,/g, "")) : undefined;
}

/** Decimal places the model stated (`"20.50"` → 2), which is the precision we hold it to. */
function decimalsOf(value: number | string): number {
  const text = typeof value === "number" ? String(value) : value.trim();
  const match = text.match(/\.(\d+)/);
  return match ? match[1]!.length : 0;
}

const UNIT_SYNONYMS: Record<string, string> = {
  percent: "%",
  "per cent": "%",
  pct: "%",
  percentage: "%",
  "percentage points": "%",
  "percentage point": "%",
  pp: "%",
  "%": "%",
  $: "usd",
  usd: "usd",
  dollar: "usd",
  dollars: "usd",
  "us dollars": "usd",
  "€": "eur",
  eur: "eur",
  euro: "eur",
  euros: "eur",
  "£": "gbp",
  gbp: "gbp",
  x: "",
  times: "",
  ratio: "",
  fold: "",
  "": "",
};

/** Canonical unit: lower case, synonyms folded (`percent` → `%`, `dollars` → `usd`). */
export function normalizeUnit(unit: string | null | undefined): string {
  const u = (unit ?? "").trim().toLowerCase().replace(/\s+/g, " ");
  return UNIT_SYNONYMS[u] ?? u;
}

/** The ways a canonical unit may be written in a source. */
function unitSpellings(unit: string): string[] {
  const canonical = normalizeUnit(unit);
  const spellings = Object.entries(UNIT_SYNONYMS)
    .filter(([written, value]) => value === canonical && written !== "")
    .map(([written]) => written);
  return spellings.length ? spellings : [canonical];
}

export type DerivedCheck = { ok: true; value: number; unit: string } | { ok: false; reason: string };

/** A quote, per finding id, from which inputs must be read. */
export type FindingQuotes = ReadonlyMap<string, string>;

/**
 * Checks a derived number: every input names a finding, its value (and unit and date,
 * when given) appear in that finding's quote; the formula only uses + − × ÷, parentheses,
 * literals and the inputs; the units combine; and the stated result equals the
 * recomputed one to the precision the result was stated with.
 */
export function checkDerived(derived: DerivedNumber, quotes: FindingQuotes): DerivedCheck {
  const values = new Map<string, Quantity>();
  for (const [name, input] of Object.entries(derived.inputs)) {
    const quote = quotes.get(input.finding);
    if (quote === undefined)
      return { ok: false, reason: `input ${name} cites ${input.finding}, which is not a verified finding` };
    const value = parseNumber(input.value);
    if (value === undefined) return { ok: false, reason: `input ${name} is not a number` };
    if (!numbersIn(quote).includes(value))
      return {
        ok: false,
        reason: `input ${name} = ${value} does not appear in the quote of ${input.finding}`,
      };
    const unit = normalizeUnit(input.unit);
    if (unit) {
      const lower = normalizeText(quote).toLowerCase();
      if (!unitSpellings(unit).some((spelling) => lower.includes(spelling)))
        return {
          ok: false,
          reason: `the unit "${input.unit}" of input ${name} is not in the quote of ${input.finding}`,
        };
    }
    if (input.date && !normalizeText(quote).toLowerCase().includes(normalizeText(input.date).toLowerCase()))
      return {
        ok: false,
        reason: `the date "${input.date}" of input ${name} is not in the quote of ${input.finding}`,
      };
    values.set(name, { value, unit, literal: false });
  }
  // A number computed from literals alone rests on no evidence.
  const names = derived.formula.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [];
  if (!names.some((name) => values.has(name)))
    return { ok: false, reason: "the formula uses none of its inputs, so nothing checked supports it" };
  let computed: Quantity;
  try {
    computed = evaluate(derived.formula, values);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const stated = parseNumber(derived.result);
  if (stated === undefined) return { ok: false, reason: "the result is not a number" };
  const statedUnit = normalizeUnit(derived.unit);
  if (statedUnit !== computed.unit) {
    return {
      ok: false,
      reason: `the result unit "${derived.unit ?? ""}" does not follow from the inputs (expected "${computed.unit || "none"}")`,
    };
  }
  const tolerance = 0.5 * 10 ** -decimalsOf(derived.result) + 1e-9 * Math.abs(computed.value);
  if (!Number.isFinite(computed.value) || Math.abs(computed.value - stated) > tolerance) {
    return {
      ok: false,
      reason: `the arithmetic does not hold: ${derived.formula} = ${round(computed.value)}, not ${stated}`,
    };
  }
  return { ok: true, value: stated, unit: derived.unit?.trim() ?? "" };
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

interface Quantity {
  value: number;
  /** Canonical unit; "" is dimensionless. */
  unit: string;
  /** A literal written in the formula (a pure number). */
  literal: boolean;
}

/** Recursive-descent evaluation of + − × ÷ with units. Throws with a readable reason. */
function evaluate(formula: string, inputs: ReadonlyMap<string, Quantity>): Quantity {
  const tokens = formula.match(/\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|[-+*/()]|\S/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const take = () => tokens[i++];

  const add = (a: Quantity, b: Quantity, op: string): Quantity => {
    if (a.unit !== b.unit)
      throw new Error(`units do not match in ${op}: "${a.unit || "none"}" and "${b.unit || "none"}"`);
    return {
      value: op === "+" ? a.value + b.value : a.value - b.value,
      unit: a.unit,
      literal: a.literal && b.literal,
    };
  };
  const multiply = (a: Quantity, b: Quantity): Quantity => {
    let unit: string;
    // A ratio times 100 is a percentage.
    if (
      (a.unit === "" && !a.literal && b.literal && b.value === 100) ||
      (b.unit === "" && !b.literal && a.literal && a.value === 100)
    )
      unit = "%";
    else if (a.unit === "") unit = b.unit;
    else if (b.unit === "") unit = a.unit;
    else unit = `${a.unit}*${b.unit}`;
    return { value: a.value * b.value, unit, literal: a.literal && b.literal };
  };
  const divide = (a: Quantity, b: Quantity): Quantity => {
    if (b.value === 0) throw new Error("the formula divides by zero");
    const unit = a.unit === b.unit ? "" : b.unit === "" ? a.unit : `${a.unit || "1"}/${b.unit}`;
    return { value: a.value / b.value, unit, literal: a.literal && b.literal };
  };

  const expression = (): Quantity => {
    let left = term();
    while (peek() === "+" || peek() === "-") {
      const op = take()!;
      left = add(left, term(), op);
    }
    return left;
  };
  const term = (): Quantity => {
    let left = factor();
    while (peek() === "*" || peek() === "/") {
      const op = take()!;
      left = op === "*" ? multiply(left, factor()) : divide(left, factor());
    }
    return left;
  };
  const factor = (): Quantity => {
    const token = take();
    if (token === undefined) throw new Error("the formula ends early");
    if (token === "-") {
      const inner = factor();
      return { ...inner, value: -inner.value };
    }
    if (token === "(") {
      const inner = expression();
      if (take() !== ")") throw new Error("the formula has unbalanced parentheses");
      return inner;
    }
    if (/^\d/.test(token)) return { value: Number(token), unit: "", literal: true };
    const input = inputs.get(token);
    if (input) return input;
    throw new Error(`the formula uses "${token}", which is not one of its inputs`);
  };

  const result = expression();
  if (i < tokens.length) throw new Error(`the formula has unexpected "${tokens[i]}"`);
  return result;
}
