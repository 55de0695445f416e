/**
 * `parseRef` on arbitrary input, as refs come back from storage or a request: it returns
 * a JSON-stable ref or throws `InvalidRefError`, never anything else, and never leaves a
 * prototype polluted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidRefError, parseRef } from "../../src/index.js";
import { RUNS } from "./harness.js";

const good = {
  v: 1,
  provider: "gemini",
  model: "gemini:deep-research-preview-04-2026",
  jobId: "v1_abc",
  cursor: "evt_7",
  createdAt: "2026-11-29T10:00:00.000Z",
  resume: { text: 10, citations: 2, last: { cursor: "evt_7", text: 1, citations: 0 } },
};

function expectRefOrInvalid(input: unknown): void {
  try {
    const ref = parseRef(input);
    expect(JSON.parse(JSON.stringify(ref))).toEqual(ref);
  } catch (error) {
    expect(InvalidRefError.isInstance(error), String(error)).toBe(true);
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

describe("parseRef (fuzzed)", () => {
  it("returns a JSON-stable ref or throws InvalidRefError for any value or JSON text", () => {
    fc.assert(
      fc.property(
        fc.anything({ withObjectString: true, withNullPrototype: true, maxDepth: 4 }),
        expectRefOrInvalid,
      ),
      { numRuns: RUNS * 5 },
    );
    fc.assert(fc.property(fc.json({ maxDepth: 4 }), expectRefOrInvalid), { numRuns: RUNS * 5 });
  });

  it("does so for a real ref with any field replaced, removed or nested below it", () => {
    const keys = [...Object.keys(good), "__proto__", "constructor", "extra"];
    fc.assert(
      fc.property(
        fc.constantFrom(...keys),
        fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
        fc.constantFrom("top", "resume", "text"),
        (key, value, where) => {
          const ref: Record<string, unknown> = JSON.parse(JSON.stringify(good));
          const target = where === "resume" ? (ref.resume as Record<string, unknown>) : ref;
          if (value === undefined) delete target[key];
          else
            Object.defineProperty(target, key, {
              value,
              enumerable: true,
              configurable: true,
              writable: true,
            });
          expectRefOrInvalid(where === "text" ? JSON.stringify(ref) : ref);
        },
      ),
      { numRuns: RUNS * 5 },
    );
  });
});
