/**
 * A mocked job runs "server-side" like a real one: once created it keeps going whether
 * or not anyone streams it, so a detached job's status, cancel and attach answer as
 * production would.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => clearMocks());
const client = () => new Sonde({ openai: { apiKey: "sk-test-not-used" }, env: {} });
const model = "openai:gpt-5.5-pro";

async function detach(c: Sonde) {
  const job = c.research.start({ model, query: "q" });
  for await (const event of job) if (event.type === "created") break;
  return job.toRef();
}

describe("a detached mock job", () => {
  it("completes on its own: get() says completed with the report, cancel() says completion won", async () => {
    mockResearch("The whole report.", { chunkSize: 4 }).always().register();
    const c = client();
    const ref = await detach(c);
    expect(await c.research.get(ref)).toMatchObject({ status: "completed", report: "The whole report." });
    expect(await c.research.cancel(ref)).toEqual({ outcome: "already-terminal", finalStatus: "completed" });
    expect((await c.research.attach(ref).result()).report).toBe("The whole report.");
  });

  it("runs at delayMs per event: running while under way; a cancel keeps what was done", async () => {
    mockResearch("abcdefghij", { chunkSize: 1, delayMs: 50 }).always().register();
    const c = client();
    const ref = await detach(c);
    await new Promise((resolve) => setTimeout(resolve, 160));
    expect((await c.research.get(ref)).status).toBe("running");
    expect(await c.research.cancel(ref)).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect((await c.research.get(ref)).status).toBe("cancelled");
    const result = await c.research.attach(ref).result();
    expect(result.status).toBe("cancelled");
    // About three events (status + two letters) had happened when the cancel landed.
    expect(result.report.length).toBeGreaterThan(0);
    expect("abcdefghij".startsWith(result.report)).toBe(true);
    expect(result.report.length).toBeLessThan(10);
  });
});
