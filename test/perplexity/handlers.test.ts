/** `providerHandlers.perplexity`: the msw handlers users get, driven through the public client. */
import { describe, expect, it } from "vitest";
import { handlers } from "../../providers/perplexity/testing.js";
import { type JobRef, Sonde } from "../../src/index.js";
import { createTestServer } from "../helpers/test-server.js";
import { collect, fastRetry } from "./helpers.js";

const BASE = "https://perplexity.test";
const server = createTestServer();

const report = "Résumé 🔋: 電池規則 changed in 2025.";
const citations = [{ url: "https://example.org/a", title: "A" }, { url: "https://example.org/b" }];
const client = (settings: Record<string, unknown> = {}) =>
  new Sonde({
    perplexity: { apiKey: "pplx-test-key-0000", baseURL: BASE, ...settings },
    retry: fastRetry,
    env: {},
  });
const model = "perplexity:medium";

describe("providers/perplexity testing handlers", () => {
  it("stream a run: the report with its [web:N] markers, citations placed on them, Perplexity's charge", async () => {
    server.use(...handlers({ baseURL: BASE, report, citations }));
    const job = client().research.start({ model, query: "q" });
    const result = await job.result();
    expect(result.report).toBe(`${report} [web:1][web:2]`);
    expect(result.citations.map((c) => [c.url, result.report.slice(c.startIndex, c.endIndex)])).toEqual([
      ["https://example.org/a", "[web:1]"],
      ["https://example.org/b", "[web:2]"],
    ]);
    expect(result.usage).toMatchObject({ searches: 1, costUSD: 0.00304, costSource: "provider" });
  });

  it("a scripted [n] is written where it stands, as Perplexity cites: [web:N], the citation on it", async () => {
    const inline = "Batteries 🔋 need passports [1]; recycled content rises [2] by 2031.";
    server.use(...handlers({ baseURL: BASE, report: inline, citations }));
    for (const stream of [true, false]) {
      const result = await client({ stream }).research.start({ model, query: "q" }).result();
      expect(result.report).toBe(
        "Batteries 🔋 need passports [web:1]; recycled content rises [web:2] by 2031.",
      );
      expect(result.citations.map((c) => [c.url, result.report.slice(c.startIndex, c.endIndex)])).toEqual([
        ["https://example.org/a", "[web:1]"],
        ["https://example.org/b", "[web:2]"],
      ]);
      // Each citation sits on the claim it supports, not after the report.
      expect(result.report.slice(0, result.citations[0]!.startIndex)).toBe("Batteries 🔋 need passports ");
    }
    // A source the report never marks is still cited (at the end); a marker past the sources stays text.
    server.use(...handlers({ baseURL: BASE, report: "Only one [2] and [9].", citations }));
    const partial = await client().research.start({ model, query: "q" }).result();
    expect(partial.report).toBe("Only one [web:2] and [9]. [web:1]");
    expect(partial.citations.map((c) => c.url)).toEqual(["https://example.org/b", "https://example.org/a"]);
  });

  it("replay the stream for a run re-attached from its ref", async () => {
    server.use(...handlers({ baseURL: BASE, report, citations }));
    const job = client().research.start({ model, query: "q" });
    let ref: JobRef | undefined;
    for await (const event of job) {
      if (event.type === "text") {
        ref = JSON.parse(JSON.stringify(job.toRef()));
        break;
      }
    }
    const again = await client().research.attach(ref!).result();
    expect(again.report).toBe(`${report} [web:1][web:2]`);
    expect(again.citations).toHaveLength(2);
  });

  it("poll a run (stream: false), get it, and answer cancels honestly", async () => {
    server.use(...handlers({ baseURL: BASE, report }));
    const sonde = client({ stream: false, cancelWaitMs: 1_000 });
    const job = sonde.research.start({ model, query: "q" });
    const events = await collect(job);
    expect(events.map((e) => (e.type === "status" ? e.status : e.type))).toEqual([
      "created",
      "queued",
      "running",
      // The polled body's search_results item, as a completed search.
      "search",
      "text",
      "usage",
      "completed",
      "done",
    ]);
    const ref = job.toRef();
    expect((await sonde.research.get(ref)).report).toBe(report);
    expect(await sonde.research.cancel(ref)).toMatchObject({
      outcome: "already-terminal",
      finalStatus: "completed",
    });

    const pending = sonde.research.start({ model, query: "q" });
    for await (const event of pending) if (event.type === "created") break;
    expect(await sonde.research.cancel(pending.toRef())).toMatchObject({
      outcome: "cancelled",
      finalStatus: "cancelled",
    });
    expect((await sonde.research.get(pending.toRef())).status).toBe("cancelled");
  });
});
