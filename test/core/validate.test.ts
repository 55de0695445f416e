import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findModel, listModels } from "../../catalog/index.js";
import {
  InvalidRequestError,
  ModelRetiredError,
  Sonde,
  UnknownModelError,
  UnsupportedOptionError,
} from "../../src/index.js";
import type { ResearchAdapter } from "../../src/provider.js";
import { adapters } from "../../src/registry.js";

// A recording adapter: any call to it means validation let a request through to an engine.
const calls: string[] = [];
const recording = (provider: "openai" | "gemini"): ResearchAdapter => ({
  specVersion: 1,
  provider,
  models: listModels({ provider }),
  supports: ["instructions", "tools", "maxToolCalls", "reasoning", "previousJobId"],
  start() {
    calls.push("start");
    throw new Error("network would start here");
  },
  attach() {
    calls.push("attach");
    throw new Error("unused");
  },
  get: async () => {
    calls.push("get");
    throw new Error("unused");
  },
  cancel: async () => {
    calls.push("cancel");
    throw new Error("unused");
  },
});

describe("request validation happens before any engine is called", () => {
  const saved = { ...adapters };
  beforeEach(() => {
    calls.length = 0;
    // Replace the real engines (registered by default), so that a call to one is recorded.
    adapters.openai = recording("openai");
    adapters.gemini = recording("gemini");
  });
  afterEach(() => {
    for (const key of Object.keys(adapters)) delete adapters[key as keyof typeof adapters];
    Object.assign(adapters, saved);
  });
  const client = new Sonde({
    openai: { apiKey: "sk-test-validate" },
    gemini: { apiKey: "AIza-test-validate-key-000000" },
    clock: () => new Date("2026-11-29T00:00:00Z"),
  });

  it("a retired model fails with the replacement named", () => {
    const error = (() => {
      try {
        client.research.start({ model: "openai:o3-deep-research", query: "q" });
      } catch (e) {
        return e;
      }
    })();
    expect(ModelRetiredError.isInstance(error)).toBe(true);
    expect((error as ModelRetiredError).replacement).toBe("openai:gpt-5.5-pro");
    expect((error as Error).message).toBe(
      'Model "openai:o3-deep-research" was retired on 2026-07-23. Use "openai:gpt-5.5-pro" instead.',
    );
    expect(calls).toEqual([]);
  });

  it("the same model validates under a clock before its shutdown (dated aliases too)", () => {
    const early = new Sonde({ openai: { apiKey: "sk-test-validate" }, clock: () => new Date("2026-07-01") });
    // A dated snapshot resolves to its catalog entry.
    const resolved = early.research.validate({ model: "openai:o3-deep-research-2025-06-26", query: "q" });
    expect(resolved.modelInfo.id).toBe("openai:o3-deep-research");
    // …and the pinned snapshot is what goes on the wire.
    expect(resolved.providerModel).toBe("o3-deep-research-2025-06-26");
  });

  it("a model is retired from the very instant of its shutdown, by the injected clock", () => {
    const at = (iso: string) =>
      new Sonde({ openai: { apiKey: "sk-test-validate" }, clock: () => new Date(iso), env: {} });
    expect(
      at("2026-07-22T23:59:59.999Z").research.validate({ model: "openai:o3-deep-research", query: "q" }),
    ).toBeTruthy();
    expect(() =>
      at("2026-07-23T00:00:00.000Z").research.start({ model: "openai:o3-deep-research", query: "q" }),
    ).toThrow(ModelRetiredError);
    expect(calls).toEqual([]);
  });

  it("an unknown model fails with the nearest ids", () => {
    expect(() => client.research.start({ model: "openai:gpt-5.5-po", query: "q" })).toThrow(
      UnknownModelError,
    );
    try {
      client.research.validate({ model: "gemini:deep-research-preview", query: "q" });
    } catch (e) {
      expect((e as UnknownModelError).suggestions[0]).toBe("gemini:deep-research-preview-04-2026");
    }
    expect(() => client.research.validate({ model: "no-colon", query: "q" })).toThrow(
      /Unknown model "no-colon"/,
    );
    expect(calls).toEqual([]);
  });

  it("malformed requests become one readable message", () => {
    expect(() =>
      client.research.validate({ model: "openai:gpt-5.5-pro", query: "  ", maxToolCalls: -1 } as never),
    ).toThrow(/query: query must not be empty; maxToolCalls: .*/);
    expect(() =>
      client.research.validate({ model: "openai:gpt-5.5-pro", query: "q", temperature: 0.2 } as never),
    ).toThrow(InvalidRequestError);
  });

  it("a malformed asOf says what form it takes, not only that the input is invalid", () => {
    for (const asOf of ["yesterday", "30/06/2026", "2026-06-30T12:00:00"])
      expect(() => client.research.validate({ model: "openai:gpt-5.5-pro", query: "q", asOf })).toThrow(
        /asOf: asOf takes an ISO date \(2026-06-30\) or date-time with offset/,
      );
    for (const asOf of ["2026-06-30", "2026-06-30T12:00:00Z"])
      expect(() =>
        client.research.validate({ model: "portable:demo/offline", query: "q", asOf }),
      ).not.toThrow();
  });

  it("options the engine cannot honour are rejected, with a pointer to the engine that can", () => {
    const error = (() => {
      try {
        client.research.validate({
          model: "gemini:deep-research-preview-04-2026",
          query: "q",
          budget: { searches: 3 },
        });
      } catch (e) {
        return e as UnsupportedOptionError;
      }
    })();
    expect(UnsupportedOptionError.isInstance(error)).toBe(true);
    expect(error?.option).toBe("budget");
    expect(error?.message).toMatch(/portable engine/);
    expect(() =>
      client.research.validate({ model: "openai:gpt-5.5-pro", query: "q", idempotencyKey: "k1" }),
    ).toThrow(/cannot honour "idempotencyKey"/);
    expect(calls).toEqual([]);
  });

  it("timeoutMs above the engine's cap is clamped, visibly", () => {
    const resolved = client.research.validate({
      model: "gemini:deep-research-preview-04-2026",
      query: "q",
      timeoutMs: 2 * 3_600_000,
    });
    expect(resolved.timeoutMs).toBe(3_600_000);
    expect(resolved.adjustments).toEqual([
      expect.objectContaining({ option: "timeoutMs", requested: 7_200_000, applied: 3_600_000 }),
    ]);
  });

  it("a timeout the user did not set is not reported as adjusted; one they set is", () => {
    const portable = new Sonde({ env: {} });
    const model = "portable:demo/offline";
    const defaulted = portable.research.validate({ model, query: "q" });
    expect(defaulted.timeoutMs).toBe(900_000);
    expect(defaulted.adjustments).toEqual([]);
    expect(portable.research.validate({ model, query: "q", timeoutMs: 3_600_000 }).adjustments).toEqual([
      expect.objectContaining({ option: "timeoutMs", requested: 3_600_000, applied: 900_000 }),
    ]);
  });

  it("an idempotencyKey refusal points only at models that can be started", () => {
    let message = "";
    try {
      client.research.validate({
        model: "gemini:deep-research-preview-04-2026",
        query: "q",
        idempotencyKey: "k",
      });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/portable engine/);
    // A model the hint names besides the one requested must be one a user can start (none retired).
    const named = (
      message.match(/\b(?:openai|gemini|openrouter|perplexity|hosted):[\w/-]+(?:\.[\w/-]+)*/g) ?? []
    ).filter((id) => id !== "gemini:deep-research-preview-04-2026");
    for (const id of named) expect(findModel(id)?.lifecycle.stage, id).not.toBe("retired");
  });

  it("a missing key fails at start with the variable to set, before any request", () => {
    const keyless = new Sonde({ env: {} });
    expect(() => keyless.research.start({ model: "openai:gpt-5.5-pro", query: "q" })).toThrow(
      /No openai API key: set OPENAI_API_KEY/,
    );
    expect(calls).toEqual([]);
  });
});
