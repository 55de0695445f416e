/**
 * The fast text-delta paths (src/transport/fast-json.ts) against JSON.parse and the general
 * decoder: whatever a fast path accepts, JSON.parse accepts too and the general path reads
 * the same values from it; and it does accept the shapes real streams send (or it would
 * never run). Generated events (keys in any order, left out or repeated, odd values,
 * escapes, astral characters, lone surrogates, nested keys of the same name), mutated
 * lines (whitespace, duplicate keys, broken escapes, raw control characters, cut-off text)
 * and every `data:` line of the recorded fixtures.
 */
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchStepText } from "../../providers/gemini/map.js";
import { decodeChunk, matchContent } from "../../src/protocols/chat-completions/chunks.js";
import { decodeStreamEvent, execTextDelta, textDeltaOf } from "../../src/protocols/responses/events.js";

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

/** What the general path parses (it trims), or undefined where it reports malformed data. */
const parsed = (text: string): Record<string, unknown> | undefined => {
  try {
    const value = JSON.parse(text.trim()) as unknown;
    return value && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
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
  fc.constant({ delta: "nested", text: "nested", content: "nested" }),
);

/** JSON text of `entries` in order (duplicates kept), optionally with `\u` escapes for all but printable ASCII. */
function serialized(entries: [string, unknown][], uEscapes: boolean): string {
  const json = `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(",")}}`;
  // Outside strings JSON has only printable ASCII: this rewrites string contents alone.
  return uEscapes
    ? json.replace(/[^\x20-\x7e]|\//g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : json;
}

/** Turns a line into something near it: whitespace, a cut, a raw control character, a broken escape. */
const mutation = fc.oneof(
  { weight: 10, arbitrary: fc.constant((s: string) => s) },
  fc.nat().map((n) => (s: string) => `${s.slice(0, n % (s.length + 1))} ${s.slice(n % (s.length + 1))}`),
  fc.nat().map((n) => (s: string) => s.slice(0, n % (s.length + 1))),
  fc.nat().map((n) => (s: string) => `${s.slice(0, n % (s.length + 1))}\n${s.slice(n % (s.length + 1))}`),
  fc.nat().map((n) => (s: string) => `${s.slice(0, n % (s.length + 1))}\\${s.slice(n % (s.length + 1))}`),
  fc.constant((s: string) => s.replace(/\\"/, '\\x"')),
  fc.constant((s: string) => s.replace(/"(delta|text|content)":/, '"$1":"x","$1":')),
  fc.constant((s: string) => s.replace(/"(delta|text|content)":"/, '"$1":"\\ud83d\\udd0b')),
  fc.constant((s: string) => s.replace(/}$/, ',"delta":"last"}')),
  fc.constant((s: string) => s.replace(/}$/, ',"usage":{"prompt_tokens":1}}')),
  fc.constant((s: string) => s.replace(/}}$/, ',"metadata":{}}}')),
  fc.constant((s: string) => s.replace(/,"logprobs":\[\]/, ',"logprobs":[1]')),
  fc.constant((s: string) => ` ${s}\t`),
);

interface Shape<K extends string> {
  /** The keys in the order real streams send them; `optional` ones may be left out or repeated. */
  keys: readonly K[];
  optional: readonly K[];
  typical: Record<K, fc.Arbitrary<unknown>>;
  /** What the general path reads (undefined: not this kind of event), and what the fast path reads. */
  general(text: string): unknown;
  fast(text: string): unknown;
}

/** Events of `shape`: its real key order (some keys left out or repeated) or any order, sometimes an odd value. */
function events<K extends string>(shape: Shape<K>): fc.Arbitrary<string> {
  const realOrder = fc
    .tuple(...shape.keys.map(() => fc.nat(5)))
    .map((draws) =>
      shape.keys.flatMap((key, i) =>
        !shape.optional.includes(key) ? [key] : draws[i] === 0 ? [] : draws[i] === 1 ? [key, key] : [key],
      ),
    );
  const anyOrder = fc.shuffledSubarray([...shape.keys], { minLength: 1 });
  return fc
    .tuple(fc.oneof(realOrder, anyOrder), fc.nat(3), fc.boolean(), fc.nat())
    .chain(([order, odd, uEscapes, which]) =>
      fc
        .tuple(
          ...order.map((key, i) => (odd === 0 && i === which % order.length ? anyValue : shape.typical[key])),
        )
        .map((values) =>
          serialized(
            order.map((key, i) => [key, values[i]]),
            uEscapes,
          ),
        ),
    );
}

/**
 * The payload a fast path builds (the delivered event's `rawEvent`) is what JSON.parse
 * builds: the same values, and the same keys in the same order.
 */
function samePayload(built: unknown, text: string): void {
  const payload = JSON.parse(text) as unknown;
  expect(built).toEqual(payload);
  expect(JSON.stringify(built)).toBe(JSON.stringify(payload));
}

function agrees<K extends string>(shape: Shape<K>, text: string): boolean {
  const fast = shape.fast(text);
  if (fast === undefined) return false;
  expect(shape.general(text)).toEqual(fast);
  return true;
}

function checks<K extends string>(name: string, shape: Shape<K>, providers: string[], real: () => string) {
  describe(name, () => {
    it("reads what JSON.parse and the general path read, on generated and mutated events", () => {
      let accepted = 0;
      fc.assert(
        fc.property(events(shape), mutation, (text, mutate) => {
          if (agrees(shape, mutate(text))) accepted++;
        }),
        { numRuns: 3000, seed: 12 },
      );
      expect(accepted).toBeGreaterThan(60);
    });

    it("accepts the shape real streams send, whatever the text holds", () => {
      fc.assert(
        fc.property(fc.constant(null), () => {
          expect(agrees(shape, real())).toBe(true);
        }),
        { numRuns: 300, seed: 7 },
      );
    });

    it("agrees on every recorded event, and reads every recorded text delta", () => {
      for (const provider of providers) {
        const lines = recordedData(provider);
        const deltas = lines.filter((line) => shape.general(line) !== undefined);
        expect(lines.filter((line) => agrees(shape, line)).length, provider).toBe(deltas.length);
        expect(deltas.length, provider).toBeGreaterThan(1);
      }
    });
  });
}

/** One sample of `arbitrary` per call, from a seeded stream (for the "real shape" checks). */
function sampler<T>(arbitrary: fc.Arbitrary<T>, seed: number): () => T {
  const samples = fc.sample(arbitrary, { numRuns: 300, seed });
  let i = 0;
  return () => samples[i++ % samples.length]!;
}

const responsesKeys = [
  "type",
  "sequence_number",
  "item_id",
  "output_index",
  "content_index",
  "delta",
  "logprobs",
  "obfuscation",
] as const;
checks(
  "Responses output_text.delta (OpenAI, Perplexity)",
  {
    keys: responsesKeys,
    optional: ["sequence_number", "delta", "logprobs", "obfuscation"],
    typical: {
      type: fc.constantFrom("response.output_text.delta", "response.output_text.done"),
      sequence_number: fc.nat(),
      item_id: fc.string(),
      output_index: fc.nat(9),
      content_index: fc.nat(3),
      delta: anyText,
      logprobs: fc.constant([]),
      obfuscation: fc.string(),
    },
    general(text) {
      const data = parsed(text);
      const event = data && decodeStreamEvent(data);
      if (event?.type !== "response.output_text.delta") return undefined;
      const { delta, item_id, content_index, sequence_number } = event;
      return { delta, item_id, content_index, sequence_number };
    },
    fast(text) {
      const match = execTextDelta(text);
      if (!match) return undefined;
      const wire = textDeltaOf(match);
      const { delta, item_id, content_index, sequence_number } = wire.event;
      // The cursor is the digits as sent: what the general path's String(sequence_number) gives.
      expect(wire.cursor).toBe(sequence_number === undefined ? undefined : String(sequence_number));
      samePayload(wire.data, text);
      return { delta, item_id, content_index, sequence_number };
    },
  },
  ["openai", "perplexity"],
  sampler(
    fc.tuple(anyText, fc.nat(), fc.boolean(), fc.boolean()).map(([delta, sequence, openai, uEscapes]) => {
      const entries: [string, unknown][] = [
        ["type", "response.output_text.delta"],
        ["sequence_number", sequence],
        ["item_id", "msg_1"],
        ["output_index", 0],
        ["content_index", 0],
        ["delta", delta],
      ];
      if (openai) entries.push(["logprobs", []], ["obfuscation", "k3Fq9"]);
      else entries.push(entries.splice(1, 1)[0]!); // Perplexity's stream may send sequence_number last
      return serialized(entries, uEscapes);
    }),
    3,
  ),
);

checks(
  "Gemini step.delta of text",
  {
    keys: ["index", "delta", "event_id", "event_type"] as const,
    optional: ["delta"],
    typical: {
      index: fc.nat(9),
      delta: fc.oneof(
        { weight: 5, arbitrary: anyText.map((text) => ({ text, type: "text" })) },
        anyText.map((text) => ({ type: "text", text })),
        anyText.map((text) => ({ text, type: "thought" })),
      ),
      event_id: fc.oneof({ weight: 5, arbitrary: fc.string() }, fc.constant("")),
      event_type: fc.oneof({ weight: 5, arbitrary: fc.constant("step.delta") }, fc.constant("content.delta")),
    },
    // The session's and the mapper's general path (providers/gemini/session.ts, map.ts #textDelta).
    general(text) {
      const data = parsed(text) as
        | { event_type?: unknown; index?: unknown; metadata?: unknown; delta?: unknown; event_id?: unknown }
        | undefined;
      if (data?.event_type !== "step.delta" || typeof data.index !== "number" || data.metadata != null)
        return;
      const delta = data.delta as { type?: unknown; text?: unknown } | null | undefined;
      if (delta?.type !== "text" || typeof delta.text !== "string") return;
      if (typeof data.event_id !== "string" || data.event_id === "") return;
      return { index: data.index, text: delta.text, eventId: data.event_id };
    },
    fast(text) {
      const wire = matchStepText(text);
      if (!wire) return undefined;
      expect(wire.cursor).toBe(wire.event.eventId);
      samePayload(wire.data, text);
      return wire.event;
    },
  },
  ["gemini"],
  sampler(
    fc.tuple(fc.nat(9), anyText, fc.nat(), fc.boolean()).map(([index, text, n, uEscapes]) =>
      serialized(
        [
          ["index", index],
          ["delta", { text, type: "text" }],
          ["event_id", `ev_${n}`],
          ["event_type", "step.delta"],
        ],
        uEscapes,
      ),
    ),
    4,
  ),
);

const word = fc.stringMatching(/^[\w./-]{0,24}$/);

/** A choice as servers send it, its keys in their order (`delta` keys in theirs), sometimes not plain. */
const choice = fc
  .tuple(
    fc.nat(2),
    anyText,
    fc.boolean(),
    fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, fc.constant("stop")),
    fc.oneof(
      { weight: 6, arbitrary: fc.constant({}) },
      fc.constant({ reasoning: "r" }),
      fc.constant({ annotations: [] }),
    ),
    fc.boolean(),
  )
  .map(([index, content, role, finish, extra, native]) => ({
    index,
    delta: { ...(role && { role: "assistant" }), content, ...extra },
    finish_reason: finish,
    ...(native && { native_finish_reason: null }),
    logprobs: null,
  }));

checks(
  "Chat Completions content chunk (OpenRouter)",
  {
    keys: ["id", "provider", "model", "object", "created", "system_fingerprint", "choices"] as const,
    optional: ["provider", "system_fingerprint", "choices"],
    typical: {
      id: fc.oneof({ weight: 5, arbitrary: word }, fc.string()),
      provider: fc.constantFrom("OpenAI", "Perplexity"),
      model: fc.oneof({ weight: 5, arbitrary: word }, fc.string()),
      object: fc.oneof(
        { weight: 5, arbitrary: fc.constant("chat.completion.chunk") },
        fc.constant("chat.completion"),
      ),
      created: fc.nat(),
      system_fingerprint: fc.oneof(fc.constant(null), fc.string()),
      choices: fc.oneof({ weight: 6, arbitrary: choice.map((c) => [c]) }, fc.array(choice, { maxLength: 2 })),
    },
    // The mapper's general path once the generation's id is known (providers/openrouter/map.ts).
    general(text) {
      const data = parsed(text);
      if (data === undefined) return undefined;
      const decoded = decodeChunk(data, true);
      return decoded.kind === "content" ? decoded.text : undefined;
    },
    fast(text) {
      const wire = matchContent(text);
      if (!wire) return undefined;
      samePayload(wire.data, text);
      return wire.event;
    },
  },
  ["openrouter"],
  sampler(
    fc.tuple(anyText, word, fc.boolean()).map(([content, id, uEscapes]) =>
      serialized(
        [
          ["id", `gen-${id}`],
          ["provider", "OpenAI"],
          ["model", "openai/o4-mini-deep-research"],
          ["object", "chat.completion.chunk"],
          ["created", 1767000000],
          [
            "choices",
            [
              {
                index: 0,
                delta: { role: "assistant", content },
                finish_reason: null,
                native_finish_reason: null,
                logprobs: null,
              },
            ],
          ],
        ],
        uEscapes,
      ),
    ),
    5,
  ),
);
