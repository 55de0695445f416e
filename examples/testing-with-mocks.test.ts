/**
 * How you test your own app's research feature without a provider: register a mock,
 * run your code, assert what your users see. The mock runs through Sonde's real job
 * machinery, so refs, attach, cancel and result() behave as in production.
 */
import { type ResearchEvent, Sonde } from "sonde";
import { clearMocks, mockResearch } from "sonde/testing";
import { afterEach, describe, expect, it } from "vitest";

// The app code under test: writes a brief and remembers the job so it can resume.
async function writeBrief(client: Sonde, topic: string, saveRef: (ref: string) => void) {
  const job = client.research.start({ model: "openai:gpt-5.5-pro", query: `Brief me on ${topic}` });
  const progress: string[] = [];
  for await (const event of job) {
    if (event.type === "created") saveRef(JSON.stringify(job.toRef()));
    if (event.type === "search" && event.state === "started") progress.push(`searching: ${event.query}`);
  }
  const { report, citations, usage } = await job.result();
  return { report, sources: citations.map((c) => c.url), costUSD: usage.costUSD, progress };
}

describe("writeBrief", () => {
  afterEach(() => clearMocks());

  it("returns the report with its sources and cost", async () => {
    mockResearch("# Battery rules\nDue-diligence duties moved to 2027.", {
      citations: [{ url: "https://example.org/battery", title: "Timeline" }],
      events: [{ type: "search", action: "search", query: "EU battery regulation 2025", state: "started" }],
      usage: { inputTokens: 10_000, outputTokens: 2_000, searches: 4 },
    })
      .whenQueryContains("battery")
      .register();

    const client = new Sonde({ openai: { apiKey: "sk-test-not-used" } });
    let saved = "";
    const brief = await writeBrief(client, "EU battery regulation", (ref) => {
      saved = ref;
    });

    expect(brief.report).toBe("# Battery rules\nDue-diligence duties moved to 2027.");
    expect(brief.sources).toEqual(["https://example.org/battery"]);
    expect(brief.progress).toEqual(["searching: EU battery regulation 2025"]);
    // 10k in × $30/M + 2k out × $180/M + 4 searches × $10/1000, from the catalog
    expect(brief.costUSD).toBeCloseTo(0.3 + 0.36 + 0.04, 9);
    expect(saved).not.toContain("sk-test");
  });

  it("can resume from the saved ref after a restart and get the same report", async () => {
    mockResearch("Resumable report text that is long enough to stream in chunks.", { chunkSize: 8 })
      .always()
      .register();
    const first = new Sonde({ openai: { apiKey: "sk-test-not-used" } });
    const job = first.research.start({ model: "openai:gpt-5.5-pro", query: "anything" });
    const seen: ResearchEvent[] = [];
    let ref = "";
    for await (const event of job) {
      seen.push(event);
      if (event.type === "text" && seen.filter((e) => e.type === "text").length === 3) {
        ref = JSON.stringify(job.toRef());
        break; // the process "crashes" here
      }
    }

    const second = new Sonde({ openai: { apiKey: "sk-test-not-used" } });
    const attached = second.research.attach(JSON.parse(ref));
    const rest: string[] = [];
    for await (const event of attached) if (event.type === "text") rest.push(event.delta);

    const firstPart = seen.flatMap((e) => (e.type === "text" ? [e.delta] : [])).join("");
    expect(firstPart + rest.join("")).toBe("Resumable report text that is long enough to stream in chunks.");
    expect((await attached.result()).report).toBe(
      "Resumable report text that is long enough to stream in chunks.",
    );
  });

  it("still rejects a retired model before anything runs", () => {
    mockResearch("never used").always().register();
    const client = new Sonde({ openai: { apiKey: "sk-test-not-used" }, clock: () => new Date("2026-11-29") });
    expect(() => client.research.start({ model: "openai:o3-deep-research", query: "x" })).toThrow(
      /retired.*openai:gpt-5\.5-pro/,
    );
  });

  it("surfaces a scripted provider failure as a typed rejection", async () => {
    mockResearch("", { fail: { code: "server_error", message: "The server had an error" } })
      .always()
      .register();
    const client = new Sonde({ openai: { apiKey: "sk-test-not-used" } });
    const job = client.research.start({ model: "openai:gpt-5.5-pro", query: "x" });
    await expect(job.result()).rejects.toMatchObject({
      code: "job_failed",
      providerCode: "server_error",
    });
  });
});

describe("a mock that matches nothing", () => {
  afterEach(() => clearMocks());

  it("leaves the request to the real engine (here, msw speaking OpenAI's wire format)", async () => {
    const { setupServer } = await import("msw/node");
    const { providerHandlers } = await import("sonde/testing/msw");
    const server = setupServer(
      ...providerHandlers.openai({ baseURL: "https://openai.test/v1", report: "From the engine itself." }),
    );
    server.listen({ onUnhandledFrame: "error" });
    try {
      const mock = mockResearch("From the mock.").whenQueryContains("battery").register();
      const client = new Sonde({
        openai: { apiKey: "sk-test-not-used", baseURL: "https://openai.test/v1" },
        retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 5 },
      });
      const result = await client.research
        .start({ model: "openai:gpt-5.5-pro", query: "solar subsidies" })
        .result();
      expect(result.report).toBe("From the engine itself.");
      expect(mock.calls).toEqual([]);
    } finally {
      server.close();
    }
  });
});
