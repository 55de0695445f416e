/** What an abort says is true per engine: no job, a remote job running on, or a local one. */
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../providers/portable/index.js";
import { JobAbortedError, Sonde } from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => clearMocks());

const aborted = async (promise: Promise<unknown>) => {
  const error = await promise.catch((e: unknown) => e);
  expect(JobAbortedError.isInstance(error)).toBe(true);
  return error as JobAbortedError;
};

describe("abort messages", () => {
  it("a pre-aborted signal: nothing was sent, no job was created", async () => {
    mockResearch("# r").always().register();
    const client = new Sonde({ env: {} });
    const job = client.research.start({
      model: "openai:gpt-5.5-pro",
      query: "q",
      signal: AbortSignal.abort(),
    });
    const error = await aborted(job.result());
    expect(error.jobState).toBe("never-sent");
    expect(error.message).toMatch(/no job was created/);
    expect(error.message).not.toMatch(/keeps running/);
  });

  it("a remote job left at created keeps running on the provider", async () => {
    mockResearch("# r", { delayMs: 5 }).always().register();
    const job = new Sonde({ env: {} }).research.start({ model: "openai:gpt-5.5-pro", query: "q" });
    for await (const event of job) if (event.type === "created") break;
    const error = await aborted(job.result());
    expect(error.jobState).toBe("remote");
    expect(error.message).toMatch(/remote job keeps running/);
  });

  it("a local job left at created keeps running in this process, and says how to pause or stop it", async () => {
    const client = new Sonde({ env: {}, portable: { store: createMemoryStore() } });
    const job = client.research.start({ model: "portable:demo/offline", query: "How do agents cite?" });
    for await (const event of job) if (event.type === "created") break;
    const error = await aborted(job.result());
    expect(error.jobState).toBe("local");
    expect(error.message).toMatch(
      /local job keeps running in this process.*job\.detach\(\).*job\.cancel\(\)/,
    );
    expect(error.message).not.toMatch(/remote/);
    // Detached instead: paused with its progress saved, and attach finishes it.
    const second = client.research.start({ model: "portable:demo/offline", query: "How do agents cite?" });
    for await (const event of second) if (event.type === "created") break;
    const ref = second.toRef();
    await second.detach();
    expect((await aborted(second.result())).jobState).toBe("local");
    expect((await client.research.attach(ref).result()).status).toBe("completed");
  });
});
