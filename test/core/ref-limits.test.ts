/**
 * A ref from outside is untrusted: oversized strings, deep nesting, oversized refs and
 * prototype-reaching keys are refused by name, synchronously, before any request.
 */

import { describe, expect, it } from "vitest";
import { InvalidRefError, parseRef, refLimits, Sonde } from "../../src/index.js";
import type { JobRef } from "../../src/ref.js";

const good = {
  v: 1,
  provider: "openai",
  model: "openai:gpt-5.5-pro",
  jobId: "resp_123",
  cursor: "41",
  createdAt: "2026-11-29T10:00:00.000Z",
  resume: { reportLength: 10 },
};

function spyClient() {
  const requests: unknown[] = [];
  const client = new Sonde({
    openai: { apiKey: "sk-test-ref-limits" },
    fetch: async (...args) => {
      requests.push(args);
      throw new Error("no request may be sent for a bad ref");
    },
    env: {},
  });
  return { client, requests };
}

/** The field `attach` names, thrown synchronously; get and cancel refuse it the same way, with no request. */
async function refusedField(input: unknown): Promise<string> {
  const ref = input as JobRef; // malformed on purpose: the run-time checks are under test
  const { client, requests } = spyClient();
  let field: string | undefined;
  try {
    client.research.attach(ref);
  } catch (error) {
    expect(InvalidRefError.isInstance(error)).toBe(true);
    field = (error as InvalidRefError).field;
  }
  expect(field, "attach() accepted the ref").toBeDefined();
  await expect(client.research.get(ref)).rejects.toSatisfy((e) => InvalidRefError.isInstance(e));
  await expect(client.research.cancel(ref)).rejects.toSatisfy((e) => InvalidRefError.isInstance(e));
  expect(requests).toEqual([]);
  return field!;
}

function nested(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { end: true };
  for (let i = 0; i < depth; i++) node = { a: node };
  return node;
}

describe("untrusted refs", () => {
  it("bounds string lengths and names the field", async () => {
    expect(await refusedField({ ...good, jobId: "x".repeat(1_000_000) })).toBe("jobId");
    expect(await refusedField({ ...good, cursor: "1".repeat(5_000_000) })).toBe("cursor");
    expect(await refusedField({ ...good, model: "m".repeat(refLimits.model + 1) })).toBe("model");
    expect(await refusedField({ ...good, resume: { pollUrl: "u".repeat(refLimits.resumeString + 1) } })).toBe(
      "resume.pollUrl",
    );
  });

  it("limits depth, naming the path to where it went too deep", async () => {
    const field = await refusedField({ ...good, resume: nested(10_000) });
    expect(field).toMatch(/^resume(\.a)+$/);
    expect(field.split(".").length).toBe(refLimits.maxDepth + 1);
    // A cyclic object (only possible in-process) ends at the same limit instead of hanging.
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(await refusedField({ ...good, resume: cyclic })).toMatch(/^resume(\.self)+$/);
  });

  it("limits the serialized size, and checks a string ref's length before parsing it", async () => {
    const wide = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, "v".repeat(20)]));
    expect(await refusedField({ ...good, resume: wide })).toBe("resume");
    const text = JSON.stringify({ ...good, resume: wide });
    expect(() => parseRef(text)).toThrow(/character string \(at most 65536\)/);
    // The same text, cut to be invalid JSON, is still refused for its size, not parsed.
    expect(() => parseRef(text.slice(0, -1))).toThrow(/character string/);
  });

  it("refuses own __proto__, constructor and prototype keys at every level instead of dropping them", async () => {
    expect(await refusedField(JSON.parse(`{"v":1,"__proto__":{"polluted":true}}`))).toBe("__proto__");
    const deep = JSON.parse(
      JSON.stringify(good).replace(`"reportLength":10`, `"x":{"y":{"__proto__":{"p":1}}}`),
    );
    expect(Object.hasOwn(deep.resume.x.y, "__proto__")).toBe(true);
    expect(await refusedField(deep)).toBe("resume.x.y.__proto__");
    expect(await refusedField({ ...good, resume: { constructor: { prototype: {} } } })).toBe(
      "resume.constructor",
    );
    expect(await refusedField({ ...good, resume: { a: [{ prototype: 1 }] } })).toBe("resume.a.0.prototype");
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("refuses values JSON cannot hold, so a ref stays JSON-stable", async () => {
    expect(await refusedField({ ...good, resume: { at: new Date() } })).toBe("resume.at");
    expect(await refusedField({ ...good, resume: { n: Number.NaN } })).toBe("resume.n");
    expect(await refusedField({ ...good, resume: { f: () => 1 } })).toBe("resume.f");
  });

  it("still reads every ref an engine writes, from the object or its JSON text", () => {
    expect(parseRef(good)).toEqual(good);
    expect(parseRef(JSON.stringify(good))).toEqual(good);
    expect(parseRef({ ...good, resume: nested(refLimits.maxDepth - 2) })).toBeTruthy();
  });
});
