/**
 * The adapter spec checks itself: an adapter built for another spec version is refused when
 * the client is made, and each engine's section of the options is checked against the schema
 * its provider exports.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { geminiAdapter, geminiSettingsSchema } from "../../providers/gemini/index.js";
import { hostedAdapter, hostedSettingsSchema } from "../../providers/hosted/index.js";
import { openaiAdapter, openaiSettingsSchema } from "../../providers/openai/index.js";
import { openrouterAdapter, openrouterSettingsSchema } from "../../providers/openrouter/index.js";
import { perplexityAdapter, perplexitySettingsSchema } from "../../providers/perplexity/index.js";
import { portableAdapter, portableSettingsSchema } from "../../providers/portable/index.js";
import { createSonde } from "../../src/core.js";
import {
  InvalidRequestError,
  type PortableSettings,
  Sonde,
  type SondeOptions,
  UnsupportedAdapterError,
} from "../../src/index.js";
import { type ResearchAdapter, specVersion } from "../../src/provider-entry.js";

const shipped = [
  geminiAdapter,
  hostedAdapter,
  openaiAdapter,
  openrouterAdapter,
  perplexityAdapter,
  portableAdapter,
];

describe("adapter spec version", () => {
  it("every shipped adapter declares the literal version, and a client takes them all", () => {
    expectTypeOf<ResearchAdapter["specVersion"]>().toEqualTypeOf<1>();
    for (const adapter of shipped) expect(adapter.specVersion).toBe(specVersion);
    expect(() => createSonde({ adapters: shipped, env: {} })).not.toThrow();
  });

  it.each([
    ["a newer version", 2],
    ["a string version", "1"],
    ["no version at all (an adapter written in plain JavaScript)", undefined],
  ])("refuses an adapter with %s, naming it, before any job", (_, version) => {
    const foreign = { ...openaiAdapter, specVersion: version } as unknown as ResearchAdapter;
    const error = (() => {
      try {
        createSonde({ adapters: [foreign], env: {} });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(UnsupportedAdapterError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "unsupported_adapter", retryable: false, specVersion: version });
    expect((error as Error).message).toContain('adapter for "openai"');
    expect((error as Error).message).toContain(`this Sonde runs version ${specVersion}`);
  });

  it("a version other than the literal does not compile", () => {
    // @ts-expect-error specVersion is the literal 1
    const wrong: ResearchAdapter = { ...openaiAdapter, specVersion: 2 };
    expect(wrong.specVersion).toBe(2);
  });
});

describe("settings schemas", () => {
  it("each provider exports the schema its adapter declares (portable checks per job)", () => {
    expect(openaiAdapter.settingsSchema).toBe(openaiSettingsSchema);
    expect(geminiAdapter.settingsSchema).toBe(geminiSettingsSchema);
    expect(openrouterAdapter.settingsSchema).toBe(openrouterSettingsSchema);
    expect(perplexityAdapter.settingsSchema).toBe(perplexitySettingsSchema);
    expect(hostedAdapter.settingsSchema).toBe(hostedSettingsSchema);
    expect(portableSettingsSchema.safeParse({ search: { provider: "tavily", apiKey: "k" } }).success).toBe(
      true,
    );
  });

  it.each<[string, SondeOptions, RegExp]>([
    ["a wrong type", { openai: { organization: 5 as never } }, /openai\.organization/],
    ["a wrong enum", { perplexity: { presetField: "level" as never } }, /perplexity\.presetField/],
    ["a negative wait", { hosted: { cancelWaitMs: -1 } }, /hosted\.cancelWaitMs/],
    ["a non-string key", { gemini: { apiKey: 42 as never } }, /gemini\.apiKey/],
    [
      "a blank path",
      { perplexity: { agentPath: "  " } },
      /perplexity\.agentPath: must be a path such as "v1\/agent"/,
    ],
    ["a non-boolean switch", { perplexity: { stream: "no" as never } }, /perplexity\.stream/],
  ])("%s in a section is refused when the client is made, naming the field", (_, options, field) => {
    expect(() => new Sonde({ ...options, env: {} })).toThrow(InvalidRequestError);
    expect(() => new Sonde({ ...options, env: {} })).toThrow(field);
  });

  it("the portable section is typed by the provider's schema, not unknown", () => {
    expectTypeOf<NonNullable<PortableSettings["fetcher"]>>().toHaveProperty("fetch");
    expectTypeOf<{ dir: string }>().toExtend<NonNullable<PortableSettings["store"]>>();
    expectTypeOf<{ provider: "brave"; apiKey: string }>().toExtend<NonNullable<PortableSettings["search"]>>();
    expectTypeOf<42>().not.toExtend<PortableSettings["search"]>();
    expectTypeOf<SondeOptions["portable"]>().toEqualTypeOf<PortableSettings | undefined>();
  });
});
