/** `providerHandlers.openai`: the msw handlers users get, driven through the public client. */

import { describe, expect, it } from "vitest";
import { handlers } from "../../providers/openai/testing.js";
import { RateLimitError } from "../../src/errors.js";
import type { JobRef } from "../../src/ref.js";
import { createTestServer } from "../helpers/test-server.js";
import { BASE, codePointSlice, collect, makeClient, ofType, POLL_MODEL, STREAMING_MODEL } from "./helpers.js";

const server = createTestServer();

const report = "Résumé 🔋: 電池規則 changed in 2025.";
const citations = [{ url: "https://example.org/a", title: "A" }, { url: "https://example.org/b" }];

describe("providers/openai testing handlers", () => {
  it("stream a background response: the report, citations over the whole text, usage, done", async () => {
    server.use(...handlers({ baseURL: BASE, report, citations, jobId: "resp_fixed0000000000000000000000" }));
    const job = makeClient().research.start({ model: STREAMING_MODEL, query: "q" });
    const events = await collect(job);
    const result = await job.result();
    expect(result.report).toBe(report);
    expect(result.jobId).toBe("resp_fixed0000000000000000000000");
    for (const { citation } of ofType(events, "citation")) {
      expect(report.slice(citation.startIndex, citation.endIndex)).toBe(codePointSlice(report, 0, 1000));
    }
    expect(result.citations.map((c) => c.url)).toEqual(citations.map((c) => c.url));
    expect(result.usage).toMatchObject({
      inputTokens: 1200,
      outputTokens: 300,
      reasoningTokens: 500,
      searches: 1,
    });
  });

  it("replay the stream for a job re-attached from its ref", async () => {
    server.use(...handlers({ baseURL: BASE, report }));
    const client = makeClient();
    const job = client.research.start({ model: STREAMING_MODEL, query: "q" });
    let ref!: JobRef;
    for await (const event of job) {
      if (event.type === "text") {
        ref = JSON.parse(JSON.stringify(job.toRef()));
        break;
      }
    }
    const again = makeClient().research.attach(ref);
    expect((await again.result()).report).toBe(report);
  });

  it("poll a poll-only job, get its snapshot, and answer cancels honestly", async () => {
    server.use(...handlers({ baseURL: BASE, report }));
    const client = makeClient();
    const job = client.research.start({ model: POLL_MODEL, query: "q" });
    const events = await collect(job);
    expect(events.map((e) => (e.type === "status" ? e.status : e.type))).toEqual([
      "created",
      "queued",
      "running",
      "search",
      "text",
      "usage",
      "completed",
      "done",
    ]);
    const ref = job.toRef();
    expect((await client.research.get(ref)).report).toBe(report);
    expect(await client.research.cancel(ref)).toMatchObject({
      outcome: "already-terminal",
      finalStatus: "completed",
    });

    const pending = client.research.start({ model: POLL_MODEL, query: "q" });
    for await (const event of pending) if (event.type === "created") break;
    expect(await client.research.cancel(pending.toRef())).toEqual({
      outcome: "cancelled",
      finalStatus: "cancelled",
    });
    expect((await client.research.get(pending.toRef())).status).toBe("cancelled");
  });

  it("fail the create request as asked", async () => {
    server.use(
      ...handlers({
        baseURL: BASE,
        fail: {
          status: 429,
          headers: { "retry-after-ms": "1" },
          body: {
            error: { message: "Slow down", type: "requests", param: null, code: "rate_limit_exceeded" },
          },
        },
      }),
    );
    const error = await makeClient({ retry: { attempts: 0, minDelayMs: 1, maxDelayMs: 1 } })
      .research.start({ model: POLL_MODEL, query: "q" })
      .result()
      .catch((e: unknown) => e);
    expect(RateLimitError.isInstance(error)).toBe(true);
  });
});
