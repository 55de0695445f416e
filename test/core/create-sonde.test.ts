/**
 * `createSonde({ adapters })` from sonde/core: a client that runs exactly the engines it is
 * given, so an app bundles only those (the size budget in scripts/check-size.mjs holds it).
 */
import { setupServer } from "msw/node";
import { afterEach, expect, it } from "vitest";
import { Catalog, listModels } from "../../catalog/index.js";
import { openaiAdapter } from "../../providers/openai/index.js";
import { perplexityAdapter } from "../../providers/perplexity/index.js";
import { createSonde } from "../../src/core.js";
import { InvalidRefError, InvalidRequestError, UnsupportedOptionError } from "../../src/errors.js";
import { Sonde } from "../../src/index.js";
import { adapters } from "../../src/registry.js";
import { providerHandlers } from "../../src/testing/msw/index.js";

let server: ReturnType<typeof setupServer> | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

it("runs a job on the engine it was given", async () => {
  const baseURL = "https://mock.test/openai";
  server = setupServer(
    ...providerHandlers.openai({ baseURL, report: "Only OpenAI here 🔋.", jobId: "resp_core" }),
  );
  server.listen({ onUnhandledFrame: "error" });
  const client = createSonde({
    adapters: [openaiAdapter],
    openai: { apiKey: "sk-test-0000000000", baseURL },
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 5 },
    env: {},
  });
  const result = await client.research.start({ model: "openai:gpt-5.5-pro", query: "q" }).result();
  expect(result.report).toBe("Only OpenAI here 🔋.");
  expect(result.status).toBe("completed");
});

it("says which import is missing for an engine it was not given", () => {
  const client = createSonde({ adapters: [openaiAdapter], env: { GEMINI_API_KEY: "AIza-test" } });
  const start = () => client.research.start({ model: "gemini:deep-research-preview-04-2026", query: "q" });
  expect(start).toThrow(UnsupportedOptionError);
  expect(start).toThrow(/sonde\/providers\/gemini/);
});

it("refuses two different adapters for one provider", () => {
  const twin = { ...openaiAdapter };
  expect(() => createSonde({ adapters: [openaiAdapter, twin] })).toThrow(InvalidRequestError);
});

it("knows the models of the engines it was given, in the catalog's order, each as the catalog validates it", () => {
  const client = createSonde({ adapters: [perplexityAdapter, openaiAdapter], env: {} });
  const ids = client.research.listModels().map((m) => m.id);
  expect(ids).toEqual(
    listModels()
      .filter((m) => m.provider === "openai" || m.provider === "perplexity")
      .map((m) => m.id),
  );
  // Every engine carries exactly its own entries of the full catalog, unchanged by validation.
  for (const adapter of Object.values(adapters))
    expect(Catalog.parse(adapter.models)).toEqual(listModels({ provider: adapter.provider }));
  expect(new Sonde({ env: {} }).research.listModels()).toEqual(listModels());
});

it("names the engine to add for a ref of an engine it was not given, before any request", () => {
  const client = createSonde({ adapters: [openaiAdapter], env: {} });
  const ref = {
    v: 1,
    provider: "gemini",
    model: "gemini:deep-research-preview-04-2026",
    jobId: "interactions/abc",
    createdAt: "2026-06-01T00:00:00Z",
    resume: {},
  } as const;
  expect(() => client.research.attach(ref)).toThrow(InvalidRefError);
  expect(() => client.research.attach(ref)).toThrow(/sonde\/providers\/gemini/);
});
