/** `mockResearch(report, { usage })` reports the usage it was given, in the public `Usage` shape. */
import { afterEach, describe, expect, it } from "vitest";
import { InvalidRequestError, type ResearchEvent, Sonde, type Usage } from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => clearMocks());
const client = () => new Sonde({ openai: { apiKey: "sk-test-not-used" }, env: {} });

async function run(): Promise<{ usage: Usage; events: ResearchEvent[] }> {
  const job = client().research.start({ model: "openai:gpt-5.5-pro", query: "sodium-ion density" });
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return { usage: (await job.result()).usage, events };
}

describe("mockResearch usage", () => {
  it("reports a scripted costUSD as given, labelled provider by default, with the counts as given", async () => {
    mockResearch("# R", {
      usage: { inputTokens: 21_000, outputTokens: 1_480, reasoningTokens: 300, searches: 12, costUSD: 0.42 },
    })
      .always()
      .register();
    const { usage, events } = await run();
    expect(usage).toEqual({
      inputTokens: 21_000,
      outputTokens: 1_480,
      reasoningTokens: 300,
      internalReasoningTokens: 0,
      searches: 12,
      fetches: 0,
      modelCalls: 0,
      costUSD: 0.42,
      costSource: "provider",
    });
    expect(events.filter((e) => e.type === "usage").at(-1)).toMatchObject({ usage: { costUSD: 0.42 } });
  });

  it("keeps costSource as given: a scripted estimate stays that estimate", async () => {
    mockResearch("# R", { usage: { inputTokens: 10, costUSD: 1.5, costSource: "estimate" } })
      .always()
      .register();
    const { usage } = await run();
    expect(usage).toMatchObject({ inputTokens: 10, costUSD: 1.5, costSource: "estimate" });
  });

  it("prices counts from the catalog when no cost is scripted", async () => {
    mockResearch("# R", { usage: { inputTokens: 1_000_000, outputTokens: 0 } })
      .always()
      .register();
    const { usage } = await run();
    expect(usage.costSource).toBe("estimate");
    expect(usage.costUSD).toBeGreaterThan(0);
  });

  it("rejects unknown keys at once, naming them, instead of dropping them", () => {
    const bad = { inputTokens: 1, providerCostUSD: 0.42, tokens: 3 } as unknown as Partial<Usage>;
    const attempt = () => mockResearch("# R", { usage: bad });
    expect(attempt).toThrow(InvalidRequestError);
    expect(attempt).toThrow(/"providerCostUSD", "tokens"/);
    expect(attempt).toThrow(/usage\.costUSD/);
    expect(() => mockResearch("# R", { usage: { costUSD: -1 } })).toThrow(/usage\.costUSD/);
    expect(() => mockResearch("# R", { usage: { costSource: "provider" } })).toThrow(/needs usage\.costUSD/);
  });
});
