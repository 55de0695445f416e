import { inspect } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";

/**
 * Every zod schema Sonde defines is built on first use (src/lazy-schema.ts): importing an
 * entry builds none, which was half of Sonde's own share of a cold import. The zod seen by
 * the modules under test counts its schema constructors' calls.
 */
const counter = vi.hoisted(() => ({ calls: 0, names: [] as string[] }));
vi.mock("zod", async (importOriginal) =>
  (await import("../helpers/counting-zod.js")).countingZod(
    await importOriginal<typeof import("zod")>(),
    counter,
  ),
);

describe("zod schemas are built on first use", () => {
  it('importing "sonde" builds no schema', async () => {
    await import("../../src/index.js");
    expect(counter.names).toEqual([]);
  });

  it("a public schema is built when first used, once", async () => {
    const { Citation } = await import("../../src/index.js");
    const before = counter.calls;
    expect(Citation.parse({ url: "https://a.example" })).toEqual({ url: "https://a.example" });
    const built = counter.calls;
    expect(built).toBeGreaterThan(before);
    Citation.parse({ url: "https://b.example" });
    expect(counter.calls).toBe(built);
  });
});

describe("a lazily built schema behaves as the schema", () => {
  it("parses, fails with the same issues, and is the same kind of schema", async () => {
    const { lazySchema } = await import("../../src/lazy-schema.js");
    const build = () => z.object({ url: z.string(), page: z.number().int().positive().optional() });
    const lazy = lazySchema(build);
    const eager = build();
    expect(lazy.parse({ url: "u", page: 2 })).toEqual({ url: "u", page: 2 });
    expect(lazy.safeParse({ url: 1, page: 0 }).error?.issues).toEqual(
      eager.safeParse({ url: 1, page: 0 }).error?.issues,
    );
    expect(lazy).toBeInstanceOf(z.ZodObject);
    expect(Object.getPrototypeOf(lazy)).toBe(Object.getPrototypeOf(eager));
    expect(Object.keys(lazy.shape)).toEqual(["url", "page"]);
    expect(Object.keys(lazySchema(build))).toEqual(Object.keys(build()));
    expect("_zod" in lazy).toBe(true);
    expect(Object.getOwnPropertyDescriptor(lazy, "_zod")?.configurable).toBe(false);
    expect(lazy.extend({ title: z.string() }).parse({ url: "u", title: "t" })).toEqual({
      url: "u",
      title: "t",
    });
    expect(z.toJSONSchema(lazy)).toEqual(z.toJSONSchema(eager));
  });

  it("nests inside an app's own schemas", async () => {
    const { ResearchEvent, Usage } = await import("../../src/index.js");
    const Log = z.object({ events: z.array(ResearchEvent), total: Usage.optional() });
    const event = { type: "text", seq: 0, delta: "Hello" };
    expect(Log.parse({ events: [event] })).toEqual({ events: [event] });
    expect(Log.safeParse({ events: [{ type: "text", seq: -1, delta: "x" }] }).success).toBe(false);
    expect(JSON.stringify(z.toJSONSchema(Log))).toContain('"delta"');
  });

  it("writes go to the schema, and its methods see the schema", async () => {
    const { lazySchema } = await import("../../src/lazy-schema.js");
    const lazy = lazySchema(() => z.string().min(2)) as z.ZodString & { note?: string };
    lazy.note = "kept";
    expect(lazy.note).toBe("kept");
    const { parse } = lazy; // a bound method, as on any zod schema
    expect(parse("ok")).toBe("ok");
    expect(() => parse("x")).toThrow();
  });

  it("shows as the schema in Node's inspect, not as an empty object", async () => {
    const { JobRef } = await import("../../src/index.js");
    const shown = inspect(JobRef, { depth: 0 });
    expect(shown).toMatch(/^ZodObject /);
    expect(shown).not.toMatch(/^\[Object: null prototype\]/);
  });

  it("refuses to be frozen, loudly, and stays usable", async () => {
    const { lazySchema } = await import("../../src/lazy-schema.js");
    const lazy = lazySchema(() => z.string());
    expect(() => Object.freeze(lazy)).toThrow(TypeError);
    expect(Object.isExtensible(lazy)).toBe(true);
    expect(Object.isFrozen(lazy)).toBe(false);
    expect(lazy.parse("still")).toBe("still");
  });

  it("is the value its methods return and register", async () => {
    const { Citation, GapKind } = await import("../../src/index.js");
    const registry = z.registry<{ id: string }>();
    expect(Citation.register(registry, { id: "Citation" })).toBe(Citation);
    expect(registry.get(Citation)).toEqual({ id: "Citation" });
    expect(Citation.optional().unwrap()).toBe(Citation);
    z.globalRegistry.add(GapKind, { description: "Why a report has a gap" });
    expect(GapKind.description).toBe("Why a report has a gap");
    // Registered under its own id, an app's schema refers to it instead of inlining it.
    const json = z.toJSONSchema(z.object({ a: Citation, b: Citation.optional() }), { metadata: registry });
    expect(json.$defs && Object.keys(json.$defs)).toEqual(["Citation"]);
  });

  it("converts to JSON Schema: every exported schema, and an app's settings built on engineSettingsShape", async () => {
    const sonde: Record<string, unknown> = await import("../../src/index.js");
    const provider: Record<string, unknown> = await import("../../src/provider-entry.js");
    const engines: Record<string, unknown>[] = await Promise.all([
      import("../../providers/openai/index.js"),
      import("../../providers/gemini/index.js"),
      import("../../providers/openrouter/index.js"),
      import("../../providers/perplexity/index.js"),
      import("../../providers/hosted/index.js"),
      import("../../providers/portable/index.js"),
    ]);
    const schemas = [sonde, provider, ...engines].flatMap((entry) =>
      Object.entries(entry).filter(([, value]) => value instanceof z.ZodType),
    );
    expect(schemas.map(([name]) => name)).toEqual(
      expect.arrayContaining(["ResearchEvent", "JobRef", "ResearchRequest", "openaiSettingsSchema"]),
    );
    for (const [name, schema] of schemas) {
      expect(() => z.toJSONSchema(schema as z.ZodType, { unrepresentable: "any" }), name).not.toThrow();
    }
    const { engineSettingsShape } = provider as typeof import("../../src/provider-entry.js");
    const appSettings = z.strictObject({ ...engineSettingsShape, region: z.string().optional() });
    expect(z.toJSONSchema(appSettings)).toMatchObject({
      properties: {
        apiKey: { type: "string" },
        previousApiKeys: { type: "array" },
        region: { type: "string" },
      },
    });
  });
});
