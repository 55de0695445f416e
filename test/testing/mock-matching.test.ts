/**
 * Which mock answers a request, and how a scripted thrown error surfaces: the public
 * contract of `mockResearch` that apps rely on to route their test requests.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RateLimitError, type ResearchEvent, Sonde } from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => clearMocks());
const client = () =>
  new Sonde({
    openai: { apiKey: "sk-test-not-used" },
    perplexity: { apiKey: "pplx-test-not-used" },
    retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 5 },
    env: {},
  });
const report = (c: Sonde, model: string, query: string) =>
  c.research
    .start({ model, query })
    .result()
    .then((r) => r.report);

describe("mockResearch matching", () => {
  it("the most recently registered match wins; whenModel and whenQueryContains narrow it; unregister hands back", async () => {
    const generic = mockResearch("generic").always().register();
    const pplx = mockResearch("perplexity only").whenModel("perplexity:medium").register();
    const battery = mockResearch("battery on openai")
      .whenModel("openai:gpt-5.5-pro")
      .whenQueryContains("Battery")
      .register();
    const c = client();

    expect(await report(c, "perplexity:medium", "anything")).toBe("perplexity only");
    expect(await report(c, "openai:gpt-5.5-pro", "anything")).toBe("generic");
    // Case-insensitive, and every condition must hold.
    expect(await report(c, "openai:gpt-5.5-pro", "EU BATTERY rules")).toBe("battery on openai");
    expect(await report(c, "perplexity:medium", "EU battery rules")).toBe("perplexity only");

    expect(pplx.calls).toEqual([
      { model: "perplexity:medium", query: "anything" },
      { model: "perplexity:medium", query: "EU battery rules" },
    ]);
    expect(battery.calls).toEqual([{ model: "openai:gpt-5.5-pro", query: "EU BATTERY rules" }]);
    expect(generic.calls).toEqual([{ model: "openai:gpt-5.5-pro", query: "anything" }]);

    pplx.unregister();
    expect(await report(c, "perplexity:medium", "anything")).toBe("generic");
  });

  it("a scripted SondeError is thrown after created, once: no reconnect runs the script anyway, and get() says failed", async () => {
    mockResearch("never delivered", { fail: new RateLimitError("slow down", { provider: "openai" }) })
      .always()
      .register();
    const c = client();
    const job = c.research.start({ model: "openai:gpt-5.5-pro", query: "q" });
    const events: ResearchEvent[] = [];
    for await (const event of job) events.push(event);
    expect(events.map((e) => e.type)).toEqual(["created", "error", "done"]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "failed" });
    const error = await job.result().catch((e: unknown) => e);
    expect(RateLimitError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe("slow down");
    expect(await c.research.get(job.toRef())).toMatchObject({ status: "failed" });
  });
});

describe("a mock needs no engine settings", () => {
  it("hosted:agents.deep_research under a mock needs no base URL and no key; without one, validate says which is missing", async () => {
    const bare = new Sonde({ env: {} });
    const request = { model: "hosted:agents.deep_research", query: "q" };
    expect(() => bare.research.validate(request)).toThrow(/set SONDE_HOSTED_BASE_URL/);
    mockResearch("hosted mock").whenModel("hosted:agents.deep_research").register();
    expect(bare.research.validate(request).provider).toBe("hosted");
    expect(await report(bare, request.model, request.query)).toBe("hosted mock");
  });
});
