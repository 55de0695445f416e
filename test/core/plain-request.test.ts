import { describe, expect, it, vi } from "vitest";
import { prng } from "../helpers/prng.js";

/**
 * A plain request (model, query, string and number options) is checked by hand
 * (src/plain-request.ts) instead of by the request schema, which zod builds on its first use:
 * the hand check must give exactly what the schema gives, and leave everything else to it.
 * The zod the modules under test see counts its schema constructors' calls.
 */
const counter = vi.hoisted(() => ({ calls: 0, names: [] as string[] }));
vi.mock("zod", async (importOriginal) =>
  (await import("../helpers/counting-zod.js")).countingZod(
    await importOriginal<typeof import("zod")>(),
    counter,
  ),
);

const { plainRequest } = await import("../../src/plain-request.js");
const { ResearchRequest } = await import("../../src/request.js");
const { InvalidRequestError, Sonde } = await import("../../src/index.js");

const KEYS = [
  "model",
  "query",
  "instructions",
  "output",
  "maxToolCalls",
  "previousJobId",
  "timeoutMs",
  "idempotencyKey",
  // Keys the hand check leaves to the schema, and keys the schema rejects.
  "asOf",
  "tools",
  "reasoning",
  "signal",
  "sources",
  "budget",
  "extra",
  "Query",
  "toString",
];
const VALUES: unknown[] = [
  undefined,
  null,
  "",
  " ",
  "  padded query \n",
  "openai:o3-deep-research",
  "x".repeat(255),
  "x".repeat(256),
  "\u00a0\u2003",
  "日本語",
  0,
  -0,
  1,
  2,
  -3,
  1.5,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  [],
  ["web_search"],
  {},
  "2026-06-30",
  { maxCostUSD: 1 },
];

function generate(next: () => number): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  // Most inputs carry a model and a query, so that most reach the checks of the other keys.
  if (next() < 0.9)
    input.model = next() < 0.8 ? "openai:o3-deep-research" : VALUES[Math.floor(next() * VALUES.length)];
  if (next() < 0.9) input.query = next() < 0.7 ? "battery rules" : VALUES[Math.floor(next() * VALUES.length)];
  const extra = Math.floor(next() * 4);
  for (let i = 0; i < extra; i++) {
    const key = KEYS[Math.floor(next() * KEYS.length)]!;
    input[key] = VALUES[Math.floor(next() * VALUES.length)];
  }
  // Key order varies: the schema's output order must not depend on it.
  return Object.fromEntries(Object.entries(input).sort(() => next() - 0.5));
}

// First in the file: nothing before it has built the request schema.
describe("start() and validate() on a plain request", () => {
  it("build no zod schema for the request, and an invalid one still gets the schema's error", () => {
    const client = new Sonde({ env: {}, gemini: { apiKey: "AIza-test-0000" } });
    const before = counter.names.length;
    const resolved = client.research.validate({
      model: "gemini:deep-research-preview-04-2026",
      query: "  battery rules ",
      instructions: "Cite the regulation.",
      timeoutMs: 60_000,
    });
    expect(resolved).toMatchObject({ query: "battery rules", timeoutMs: 60_000 });
    expect(counter.names.slice(before)).toEqual([]);
    let error: unknown;
    try {
      client.research.validate({ model: "gemini:deep-research-preview-04-2026", query: "   " });
    } catch (thrown) {
      error = thrown;
    }
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/query must not be empty/);
  });
});

describe("a plain request is checked by hand, with the schema's result", () => {
  it("agrees with ResearchRequest on generated input, and handles every plain request itself", () => {
    const next = prng(12);
    let handled = 0;
    for (let i = 0; i < 4000; i++) {
      const input = generate(next);
      const parsed = ResearchRequest.safeParse(input);
      const plain = plainRequest(input);
      const plainKeys = Object.keys(input).every((key) =>
        ["model", "query", "instructions", "output", "maxToolCalls", "previousJobId", "timeoutMs"].includes(
          key,
        ),
      );
      const context = JSON.stringify(input, (_, v) => (v === undefined ? "<undefined>" : v));
      if (plain !== undefined) {
        handled++;
        expect(parsed.success, context).toBe(true);
        // The same keys, in the same order, with the same values (undefined ones included).
        expect(Object.entries(plain), context).toEqual(Object.entries(parsed.data!));
        expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
      } else if (parsed.success) {
        // A valid request the hand check passed on must have had an option it leaves to the schema.
        expect(plainKeys, context).toBe(false);
      }
    }
    expect(handled).toBeGreaterThan(400);
  });

  it("lists the keys in the schema's order, whatever their order in the request, undefined ones too", () => {
    const values = {
      timeoutMs: 60_000,
      previousJobId: "resp_1",
      maxToolCalls: 3,
      output: "a brief",
      instructions: "Cite the regulation.",
      query: " battery rules ",
      model: "openai:o3-deep-research",
    };
    const empty = { ...values, timeoutMs: undefined, previousJobId: undefined, maxToolCalls: undefined };
    for (const input of [values, { ...empty, output: undefined, instructions: undefined }, empty]) {
      const plain = plainRequest(input);
      expect(plain).toBeDefined();
      expect(Object.entries(plain!)).toEqual(Object.entries(ResearchRequest.parse(input)));
    }
  });

  it("reads each field once, as the schema does", () => {
    let reads = 0;
    const input = {
      model: "openai:o3-deep-research",
      get query() {
        reads++;
        return reads === 1 ? "first" : 42;
      },
    };
    expect(plainRequest(input)).toEqual({ model: "openai:o3-deep-research", query: "first" });
    expect(reads).toBe(1);
  });

  it("leaves objects that are not plain to the schema, which reads inherited and hidden fields", () => {
    class Request {
      model = "openai:o3-deep-research";
      query = "q";
    }
    const inherited = Object.create({ query: "from the prototype" }) as Record<string, unknown>;
    inherited.model = "openai:o3-deep-research";
    const hidden = { model: "openai:o3-deep-research" };
    Object.defineProperty(hidden, "query", { value: "hidden", enumerable: false });
    for (const input of [new Request(), inherited, hidden, ["model", "query"], "model", 1, null])
      expect(plainRequest(input)).toBeUndefined();
    expect(ResearchRequest.parse(inherited)).toEqual({
      model: "openai:o3-deep-research",
      query: "from the prototype",
    });
    const bare = Object.assign(Object.create(null), { model: "m", query: " q " });
    expect(plainRequest(bare)).toEqual({ model: "m", query: "q" });
  });
});
