import { describe, expect, it, vi } from "vitest";

/**
 * A section of the client options holding only a key and a base URL passes an
 * engine's settings schema without the schema being built (src/plain-settings.ts). That holds
 * only while every engine's schema is `engineSettingsShape` plus optional fields: these checks
 * fail when an engine's schema stops accepting such a section. The zod the modules under test
 * see counts its schema constructors' calls.
 */
const counter = vi.hoisted(() => ({ calls: 0, names: [] as string[] }));
vi.mock("zod", async (importOriginal) =>
  (await import("../helpers/counting-zod.js")).countingZod(
    await importOriginal<typeof import("zod")>(),
    counter,
  ),
);

const { InvalidRequestError, Sonde } = await import("../../src/index.js");
const { plainSection } = await import("../../src/plain-settings.js");
const { adapters } = await import("../../src/registry.js");
const { z } = await import("zod");

const managed = ["openai", "gemini", "openrouter", "perplexity", "hosted"] as const;

// First in the file: nothing before it has built an engine's settings schema.
describe("new Sonde() with keys and endpoints in its options", () => {
  it("builds no settings schema, and a bad section still gets the schema's error", () => {
    const before = counter.names.length;
    new Sonde({
      env: {},
      openai: { apiKey: "sk-test-0000", baseURL: "http://127.0.0.1:1/v1" },
      perplexity: { apiKey: "pplx-test-0000" },
      gemini: {},
    });
    expect(counter.names.slice(before)).toEqual([]);
    expect(() => new Sonde({ env: {}, openai: { apiKey: 1 as unknown as string } })).toThrow(
      /Invalid client option openai\.apiKey: Invalid input: expected string/,
    );
    const error = (() => {
      try {
        new Sonde({ env: {}, perplexity: { apiKey: "pplx-test-0000", stream: "no" as unknown as boolean } });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/perplexity\.stream/);
  });
});

const STRINGS = [undefined, "", "sk-test-0000", "http://127.0.0.1:1/v1", " "];
const OTHERS: unknown[] = [null, 0, 1, true, {}, ["a"], [1], [], Symbol.for("x")];

describe("a plain section passes every engine's settings schema", () => {
  it("each engine's schema is marked, and accepts every plain section", () => {
    for (const provider of managed) {
      const schema = adapters[provider]!.settingsSchema as {
        safeParse(value: unknown): { success: boolean };
      };
      for (const apiKey of STRINGS)
        for (const baseURL of STRINGS)
          for (const explicit of [false, true]) {
            const section: Record<string, unknown> = {};
            if (apiKey !== undefined || explicit) section.apiKey = apiKey;
            if (baseURL !== undefined || explicit) section.baseURL = baseURL;
            expect(plainSection(schema, section), `${provider} ${JSON.stringify(section)}`).toBe(true);
            expect(schema.safeParse(section).success, `${provider} ${JSON.stringify(section)}`).toBe(true);
          }
    }
  });

  it("anything else is left to the schema", () => {
    const holes = ["a"];
    holes[2] = "c";
    class Section {
      apiKey = "sk-test-0000";
    }
    const hidden = {};
    Object.defineProperty(hidden, "apiKey", { value: 1, enumerable: false });
    const sections: unknown[] = [
      ...OTHERS.map((apiKey) => ({ apiKey })),
      ...OTHERS.map((baseURL) => ({ baseURL })),
      // Earlier keys, valid or not, are left to the schema.
      { previousApiKeys: ["pplx-old-0000"] },
      { previousApiKeys: holes },
      { apiKey: "sk-test-0000", organization: "org" },
      { stream: false },
      new Section(),
      hidden,
      Object.create({ apiKey: 1 }),
      null,
      "sk-test-0000",
    ];
    for (const provider of managed) {
      const schema = adapters[provider]!.settingsSchema!;
      for (const section of sections)
        expect(plainSection(schema, section), `${provider} ${String(section)}`).toBe(false);
    }
    // Whatever the engine (the portable one's schema included), a section passed unparsed is
    // one its schema accepts.
    for (const adapter of Object.values(adapters)) {
      const schema = adapter.settingsSchema as
        | { safeParse(value: unknown): { success: boolean } }
        | undefined;
      if (!schema) continue;
      for (const section of [...sections, { apiKey: "sk-test-0000" }, { baseURL: "http://127.0.0.1:1" }, {}])
        if (plainSection(schema, section))
          expect(schema.safeParse(section).success, `${adapter.provider} ${String(section)}`).toBe(true);
    }
    // A schema not marked (an adapter from elsewhere) is always parsed.
    expect(plainSection(z.strictObject({ apiKey: z.string().min(10) }), { apiKey: "short" })).toBe(false);
  });
});
