/**
 * The fast text-delta paths (src/transport/fast-json.ts) against JSON.parse and the general
 * decoder: whatever a fast path accepts, JSON.parse accepts too and the general path reads
 * the same values from it; and it does accept the shapes real streams send (or it would
 * never run). Generated events (keys in any order, escapes, astral characters, lone
 * surrogates, nested keys of the same name), mutated lines (whitespace, duplicate keys,
 * broken escapes, raw control characters, cut-off text) and the recorded fixtures.
 */
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeStreamEvent, matchTextDelta } from "../../src/protocols/responses/events.js";

const fixtures = new URL("../fixtures/", import.meta.url);

/** Every `data:` payload of the recorded SSE fixtures of `provider`. */
function recordedData(provider: string): string[] {
  const dir = new URL(`${provider}/`, fixtures);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".sse"))
    .flatMap((name) => readFileSync(new URL(name, dir), "utf8").split(/\r?\n/))
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text.trim());
  } catch {
    return undefined;
  }
};

/** Any UTF-16 code unit, lone surrogates and control characters included. */
const unit = fc.nat(0xffff).map((code) => String.fromCharCode(code));
const anyText = fc.oneof(fc.string(), fc.string({ unit }), fc.string({ unit: "binary" }));
const anyValue = fc.oneof(
  anyText,
  fc.nat(),
  fc.integer({ min: -5, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(null),
  fc.constant([]),
  fc.constant({ delta: "nested" }),
);

/** JSON text of `entries` in order (duplicates kept), with JSON.stringify's escapes or `\u` ones. */
const serialized = (entries: [string, unknown][], uEscapes: boolean) =>
  `{${entries
    .map(([key, value]) => {
      let json = JSON.stringify(value);
      if (uEscapes && typeof value === "string")
        json = json.replace(/[^\x20-\x7e]|\//g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
      return `${JSON.stringify(key)}:${json}`;
    })
    .join(",")}}`;

/** Turns a line into something near it: whitespace, a cut, a raw control character, a broken escape. */
const mutation = fc.oneof(
  fc.constant((s: string) => s),
  fc.nat().map((n) => (s: string) => `${s.slice(0, n % (s.length + 1))} ${s.slice(n % (s.length + 1))}`),
  fc.nat().map((n) => (s: string) => s.slice(0, n % (s.length + 1))),
  fc.nat().map((n) => (s: string) => `${s.slice(0, n % (s.length + 1))}\n${s.slice(n % (s.length + 1))}`),
  fc.nat().map((n) => (s: string) => `${s.slice(0, n % (s.length + 1))}\\${s.slice(n % (s.length + 1))}`),
  fc.constant((s: string) => s.replace(/\\"/, '\\x"')),
  fc.constant((s: string) => s.replace(/"delta":/, '"delta":"x","delta":')),
  fc.constant((s: string) => s.replace(/}$/, ',"delta":"last"}')),
  fc.constant((s: string) => s.replace(/,"logprobs":\[\]/, ',"logprobs":[1]')),
  fc.constant((s: string) => ` ${s}\t`),
);

describe("Responses text delta (OpenAI, Perplexity)", () => {
  const keys = [
    "type",
    "sequence_number",
    "item_id",
    "output_index",
    "content_index",
    "delta",
    "logprobs",
    "obfuscation",
  ] as const;
  const typical = (key: (typeof keys)[number]) =>
    ({
      type: fc.oneof(fc.constant("response.output_text.delta"), fc.constant("response.output_text.done")),
      sequence_number: fc.nat(),
      item_id: fc.string(),
      output_index: fc.nat(9),
      content_index: fc.nat(3),
      delta: anyText,
      logprobs: fc.constant([]),
      obfuscation: fc.string(),
    })[key] as fc.Arbitrary<unknown>;
  const event = fc
    .tuple(
      fc.oneof(
        fc.shuffledSubarray([...keys], { minLength: 1 }),
        // The order real streams send, optional keys left out or repeated (the last one wins).
        fc
          .tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean())
          .map(
            ([first, logprobs, obfuscation, last, twice]) =>
              [
                "type",
                ...(first ? ["sequence_number" as const] : []),
                "item_id",
                "output_index",
                "content_index",
                "delta",
                ...(twice ? ["delta" as const] : []),
                ...(logprobs ? ["logprobs" as const] : []),
                ...(obfuscation ? ["obfuscation" as const] : []),
                ...(last ? ["sequence_number" as const] : []),
              ] as (typeof keys)[number][],
          ),
      ),
      fc.nat(3).map((n) => n === 0), // an odd value for one key
      fc.boolean(), // \u escapes
      fc.nat(),
    )
    .chain(([order, odd, uEscapes, which]) =>
      fc
        .tuple(...order.map((key, i) => (odd && i === which % order.length ? anyValue : typical(key))))
        .map((values) =>
          serialized(
            order.map((key, i) => [key, values[i]]),
            uEscapes,
          ),
        ),
    );

  /** What the general path reads from `text`: the decoded text delta, if it is one. */
  function general(text: string) {
    const data = parsed(text);
    const decoded = data === undefined ? undefined : decodeStreamEvent(data);
    if (decoded?.type !== "response.output_text.delta") return undefined;
    return {
      delta: decoded.delta,
      item_id: decoded.item_id ?? undefined,
      content_index: decoded.content_index ?? undefined,
      sequence_number: decoded.sequence_number ?? undefined,
    };
  }

  function agrees(text: string): boolean {
    const fast = matchTextDelta(text);
    if (!fast) return false;
    expect(general(text)).toEqual({
      delta: fast.delta,
      item_id: fast.item_id,
      content_index: fast.content_index,
      sequence_number: fast.sequence_number,
    });
    return true;
  }

  it("reads what JSON.parse and the decoder read, on generated and mutated events", () => {
    let accepted = 0;
    fc.assert(
      fc.property(event, mutation, (text, mutate) => {
        if (agrees(mutate(text))) accepted++;
      }),
      { numRuns: 4000, seed: 12 },
    );
    expect(accepted).toBeGreaterThan(50);
  });

  it("accepts the shapes real streams send, whatever the delta holds", () => {
    fc.assert(
      fc.property(anyText, fc.nat(), fc.boolean(), fc.boolean(), (delta, sequence, openai, uEscapes) => {
        const entries: [string, unknown][] = [
          ["type", "response.output_text.delta"],
          ["sequence_number", sequence],
          ["item_id", "msg_1"],
          ["output_index", 0],
          ["content_index", 0],
          ["delta", delta],
        ];
        if (openai) entries.push(["logprobs", []], ["obfuscation", "k3Fq9"]);
        else entries.push(entries.splice(1, 1)[0]!); // sequence_number last
        expect(agrees(serialized(entries, uEscapes))).toBe(true);
      }),
      { numRuns: 1000, seed: 7 },
    );
  });

  it("agrees on every recorded OpenAI and Perplexity event, and reads their text deltas", () => {
    for (const provider of ["openai", "perplexity"]) {
      const lines = recordedData(provider);
      const deltas = lines.filter((line) => general(line) !== undefined);
      const accepted = lines.filter(agrees);
      expect(accepted.length, provider).toBe(deltas.length);
      expect(deltas.length, provider).toBeGreaterThan(1);
    }
  });
});
