/**
 * The msw handlers `sonde/testing` exposes for Gemini: a user's test drives a whole job
 * through the real engine against them.
 */
import { describe, expect, it } from "vitest";
import { handlers } from "../../providers/gemini/testing.js";
import { RateLimitError, Sonde } from "../../src/index.js";
import { createTestServer } from "../helpers/test-server.js";
import { FAST, KEY } from "./helpers.js";

const server = createTestServer();

const client = () => new Sonde({ gemini: { apiKey: KEY }, retry: FAST, env: {} });
const model = "gemini:deep-research-preview-04-2026";

describe("providers/gemini/testing handlers", () => {
  it("simulate a Deep Research run: report, byte-offset citations (converted), usage, and a stored result", async () => {
    const report = "Résumé: déjà vu 🚀 — 終わり. Second sentence keeps going for a while.";
    server.use(
      ...handlers({ report, jobId: "v1_testJob", citations: [{ url: "https://example.org/a", title: "A" }] }),
    );
    const sonde = client();
    const job = sonde.research.start({ model, query: "q" });
    const result = await job.result();
    expect(result.report).toBe(report);
    expect(result.citations).toEqual([
      { url: "https://example.org/a", title: "A", startIndex: 0, endIndex: report.length },
    ]);
    expect(result.usage.searches).toBe(1);
    const snapshot = await sonde.research.get(job.toRef());
    expect(snapshot).toMatchObject({ status: "completed", report, jobId: "v1_testJob" });
    expect(await sonde.research.cancel(job.toRef())).toMatchObject({
      outcome: "already-terminal",
      finalStatus: "completed",
    });
  });

  it("`fail` makes the create fail with that status", async () => {
    server.use(
      ...handlers({
        fail: { status: 429, body: { error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } } },
      }),
    );
    const error = await client()
      .research.start({ model, query: "q" })
      .result()
      .catch((e) => e);
    expect(RateLimitError.isInstance(error)).toBe(true);
  });

  it("honour a custom base URL", async () => {
    server.use(...handlers({ baseURL: "https://proxy.example.com/gemini/v1beta/", report: "Via proxy." }));
    const sonde = new Sonde({
      gemini: { apiKey: KEY, baseURL: "https://proxy.example.com/gemini/v1beta" },
      retry: FAST,
      env: {},
    });
    expect((await sonde.research.start({ model, query: "q" }).result()).report).toBe("Via proxy.");
  });
});
