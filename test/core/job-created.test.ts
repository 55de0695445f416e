/**
 * `await job.created()`: a web handler starts a job and returns its ref without iterating,
 * and whoever iterates later still receives every event exactly once.
 */
import { describe, expect, it } from "vitest";
import { JobNotCreatedError, ProviderUnavailableError, StreamConsumedError } from "../../src/errors.js";
import type { EngineSession } from "../../src/provider.js";
import { collectEvents, fakeJob, fakeSession, script } from "../helpers/fake-engine.js";

const job = (session: EngineSession, extra: Parameters<typeof fakeJob>[1] = {}) =>
  fakeJob(session, { retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 5 }, ...extra });
const collect = collectEvents;

describe("job.created()", () => {
  it("resolves with the id, makes toRef() valid, and leaves every event to the iteration", async () => {
    const events = script(20);
    const baseline = await collect(job(fakeSession({ events })));
    const j = job(fakeSession({ events }));
    expect(() => j.toRef()).toThrow(JobNotCreatedError);
    const id = await j.created();
    expect(id).toBe("job_1");
    expect(j.id).toBe("job_1");
    expect(j.toRef()).toMatchObject({ jobId: "job_1", provider: "openai" });
    expect(await j.created()).toBe("job_1"); // the same promise
    const received = await collect(j);
    expect(received).toEqual(baseline);
    expect(received.filter((e) => e.type === "created")).toHaveLength(1);
    expect((await j.result()).status).toBe("completed");
  });

  it("a ref taken after created() attaches like a ref taken at the created event", async () => {
    const events = script(10);
    const session = fakeSession({ events });
    const j = job(session);
    await j.created();
    const ref = j.toRef();
    const again = job(fakeSession({ events }), { ref });
    const attached = await collect(again);
    expect(attached.map((e) => e.type)).not.toContain("created");
    expect(attached.map((e) => e.type).slice(0, 2)).toEqual(["status", "text"]);
    const original = await collect(j);
    expect(original.map((e) => e.type).slice(1)).toEqual(attached.map((e) => e.type));
  });

  it("works alongside result() and a for await that started first", async () => {
    const j = job(fakeSession({ events: script(5) }));
    const result = j.result();
    const iterated = collect(j);
    expect(await j.created()).toBe("job_1");
    expect((await iterated).filter((e) => e.type === "created")).toHaveLength(1);
    expect((await result).status).toBe("completed");
    expect(() => j[Symbol.asyncIterator]()).toThrow(StreamConsumedError);
  });

  it("rejects with the typed error when the job fails before it exists", async () => {
    const failing: EngineSession = {
      ...fakeSession({ events: [] }),
      // biome-ignore lint/correctness/useYield: it fails at once, like a refused submission
      async *connect() {
        throw new ProviderUnavailableError("openai 503: overloaded", { provider: "openai", status: 503 });
      },
    };
    const j = job(failing);
    const error = await j.created().catch((e: unknown) => e);
    expect(ProviderUnavailableError.isInstance(error)).toBe(true);
    // The iteration still sees the failure, once.
    expect((await collect(j)).map((e) => e.type)).toEqual(["error", "done"]);
  });

  it("cancel() after created() with nobody iterating says cancelled at once; a later iteration gets the end", async () => {
    const j = job(fakeSession({ events: script(20) }));
    await j.created();
    expect(j.status).toBe("queued");
    expect(await j.cancel()).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect(j.status).toBe("cancelled");
    const received = await collect(j);
    expect(received.slice(-2)).toMatchObject([
      { type: "status", status: "cancelled" },
      { type: "done", status: "cancelled" },
    ]);
    expect(j.status).toBe("cancelled");
    expect((await j.result()).status).toBe("cancelled");
  });

  it("cancel() before anything was sent says cancelled at once", async () => {
    const j = job(fakeSession({ events: script(3) }));
    expect(await j.cancel()).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect(j.status).toBe("cancelled");
  });

  it("rejects with JobNotCreatedError when the job ends without an id", async () => {
    const j = job(fakeSession({ events: script(3) }));
    await j.cancel(); // before anything was sent: cancelled locally
    const error = await j.created().catch((e: unknown) => e);
    expect(JobNotCreatedError.isInstance(error)).toBe(true);
  });

  it("a consumer that breaks inside the events created() pulled still closes the job", async () => {
    const j = job(fakeSession({ events: script(5) }));
    await j.created();
    for await (const event of j) if (event.type === "created") break;
    const error = await j.result().catch((e: unknown) => e);
    expect((error as Error).name).toBe("JobAbortedError");
  });
});
