/**
 * `new Sonde()` carries every engine but loads none of them up front (src/lazy-engine.ts):
 * an engine's adapter module (its session, mapper, wire schemas and protocol) is imported
 * when a job of that engine starts or attaches, or a ref of it is read or cancelled. What an
 * engine refuses synchronously is still refused synchronously, before it loads, and an
 * engine that cannot be loaded is a typed error, not a hang.
 */
import { setupServer } from "msw/node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { handlers as openaiHandlers } from "../../providers/openai/testing.js";
import {
  InvalidRefError,
  InvalidRequestError,
  type JobRef,
  MissingDependencyError,
  Sonde,
  UnsupportedOptionError,
} from "../../src/index.js";

/**
 * Records each engine's adapter module as it is imported (these mocks apply to the registry's
 * imports, static or dynamic, from the moment this file loads). Gemini's fails while `geminiBroken`.
 */
const state = vi.hoisted(() => ({ loaded: [] as string[], geminiBroken: true }));
vi.mock("../../providers/openai/adapter.js", async (original) => {
  state.loaded.push("openai");
  return original();
});
vi.mock("../../providers/openrouter/adapter.js", async (original) => {
  state.loaded.push("openrouter");
  return original();
});
vi.mock("../../providers/perplexity/adapter.js", async (original) => {
  state.loaded.push("perplexity");
  return original();
});
vi.mock("../../providers/hosted/adapter.js", async (original) => {
  state.loaded.push("hosted");
  return original();
});
vi.mock("../../providers/portable/adapter.js", async (original) => {
  state.loaded.push("portable");
  return original();
});
vi.mock("../../providers/gemini/adapter.js", async (original) => {
  if (state.geminiBroken) throw new Error("chunk-GEMINI.js was not shipped");
  state.loaded.push("gemini");
  return original();
});

let server: ReturnType<typeof setupServer> | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

const keys = {
  openai: { apiKey: "sk-test-0000000000", baseURL: "https://mock.test/openai" },
  gemini: { apiKey: "AIza-test-0000000000", baseURL: "https://mock.test/gemini" },
  openrouter: { apiKey: "sk-or-test-0000000000" },
  perplexity: { apiKey: "pplx-test-0000000000" },
  hosted: { apiKey: "hosted-test-0000000000", baseURL: "https://mock.test/hosted" },
  retry: { attempts: 2, minDelayMs: 1, maxDelayMs: 5 },
  env: {},
  clock: () => new Date("2026-06-01T00:00:00Z"),
};

/** Lets any import started so far settle. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

const ref = (fields: Partial<JobRef> & Pick<JobRef, "provider" | "model">): JobRef => ({
  v: 1,
  jobId: "job_1",
  createdAt: "2026-06-01T00:00:00.000Z",
  resume: {},
  ...fields,
});

describe("new Sonde() loads an engine on first use", () => {
  it("loads no engine for a client, its catalog, validation and estimates", async () => {
    const client = new Sonde(keys);
    expect(client.research.listModels().length).toBeGreaterThan(5);
    client.research.validate({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    client.research.validate({ model: "openai:gpt-5.5-pro", query: "q", tools: [{ type: "web_search" }] });
    client.research.estimate({ model: "perplexity:medium", query: "q" });
    await settle();
    expect(state.loaded).toEqual([]);
  });

  it("loads only the engine of a job that starts, and runs the job on it", async () => {
    server = setupServer(...openaiHandlers({ baseURL: keys.openai.baseURL, report: "Lazy but whole." }));
    server.listen({ onUnhandledFrame: "error" });
    const client = new Sonde(keys);
    const job = client.research.start({ model: "openai:gpt-5.5-pro", query: "q" });
    const result = await job.result();
    expect(result.report).toBe("Lazy but whole.");
    expect(job.toRef().jobId).toBe(result.jobId);
    await settle();
    expect(state.loaded).toEqual(["openai"]);
  });

  it("refuses synchronously, before loading, what start() and attach() refuse", async () => {
    const before = [...state.loaded];
    const client = new Sonde({ ...keys, hosted: { apiKey: "k" } });
    expect(() => client.research.start({ model: "hosted:agents.deep_research", query: "q" })).toThrow(
      InvalidRequestError,
    );
    const badResume = ref({ provider: "openai", model: "openai:gpt-5.5-pro", resume: { reportLength: -1 } });
    expect(() => client.research.attach(badResume)).toThrow(InvalidRefError);
    expect(() => client.research.attach(badResume)).toThrow(/resume\.reportLength/);
    const gemini = ref({
      provider: "gemini",
      model: "gemini:deep-research-preview-04-2026",
      resume: { text: "many" },
    });
    expect(() => client.research.attach(gemini)).toThrow(/resume\.text/);
    const openrouter = ref({ provider: "openrouter", model: "openrouter:perplexity/sonar-deep-research" });
    expect(() => client.research.attach(openrouter)).toThrow(UnsupportedOptionError);
    const portable = ref({ provider: "portable", model: "portable:demo/offline", jobId: "not-portable" });
    expect(() => client.research.attach(portable)).toThrow(InvalidRefError);
    await settle();
    expect(state.loaded).toEqual(before);
  });

  it("an attached job answers from its ref before its engine loads", async () => {
    const client = new Sonde(keys);
    const resume = { reportLength: 12, citations: 1, trail: 2 };
    const model = "perplexity:medium";
    const original = ref({ provider: "perplexity", model, jobId: "resp_9", cursor: "7", resume });
    const job = client.research.attach(original);
    // Synchronously after attach(): the engine's import has only just started.
    expect(state.loaded).not.toContain("perplexity");
    expect(job.id).toBe("resp_9");
    expect(job.toRef()).toMatchObject({ jobId: "resp_9", cursor: "7", resume });
    job.abort();
    await settle();
    expect(state.loaded).toContain("perplexity");
  });

  it("a local engine's job can be detached before its engine loads", async () => {
    const client = new Sonde(keys);
    const job = client.research.start({ model: "portable:demo/offline", query: "q" });
    await expect(job.detach()).resolves.toBeUndefined();
    await expect(job.result()).rejects.toMatchObject({ code: "aborted" });
  });
});

describe("an engine that fails to load", () => {
  it("ends the job with a MissingDependencyError naming the engine, and sends nothing", async () => {
    const fetch = vi.fn(globalThis.fetch);
    const client = new Sonde({ ...keys, fetch });
    const job = client.research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
    const error = await job.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MissingDependencyError);
    expect(error).toMatchObject({ code: "missing_dependency", provider: "gemini", retryable: false });
    expect((error as Error).message).toMatch(/^gemini: Sonde's gemini engine failed to load \(/);
    expect((error as Error).message).toMatch(/sonde\/providers\/gemini/);
    expect(job.status).not.toBe("running");
    expect(fetch).not.toHaveBeenCalled();
  });

  it("an attached job whose engine fails to load ends incomplete, not failed: the remote job still runs", async () => {
    const fetch = vi.fn(globalThis.fetch);
    const client = new Sonde({ ...keys, fetch });
    const job = client.research.attach(
      ref({
        provider: "gemini",
        model: "gemini:deep-research-preview-04-2026",
        jobId: "v1_running",
        cursor: "ev_7",
      }),
    );
    const events = [];
    for await (const event of job) events.push(event);
    const error = await job.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingDependencyError);
    // Before, `failed`: an app would give up on (or submit again) a job that runs and bills on.
    expect(events.map((event) => event.type)).toEqual(["error", "done"]);
    expect(events[0]).toMatchObject({
      type: "error",
      error: { code: "missing_dependency", retryable: true },
    });
    expect(events[1]).toMatchObject({ type: "done", status: "incomplete" });
    expect(job.status).toBe("incomplete");
    expect(job.toRef()).toMatchObject({ jobId: "v1_running", cursor: "ev_7" });
    expect(fetch).not.toHaveBeenCalled();
  });

  it("is tried again on the next use", async () => {
    const client = new Sonde(keys);
    const gemini = ref({ provider: "gemini", model: "gemini:deep-research-preview-04-2026" });
    await expect(client.research.get(gemini)).rejects.toBeInstanceOf(MissingDependencyError);
    state.geminiBroken = false;
    // Loads now; the request itself then fails on the (unresolvable) test host.
    const error = await client.research.get(gemini).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(MissingDependencyError);
    expect(error).toMatchObject({ provider: "gemini" });
    expect(state.loaded).toContain("gemini");
  });
});
