/**
 * `createSonde({ adapters })` from sonde/core: a client that runs exactly the engines it is
 * given, so an app bundles only those (the size budget in scripts/check-size.mjs holds it).
 */
import { setupServer } from "msw/node";
import { afterEach, expect, it } from "vitest";
import { openaiAdapter } from "../../providers/openai/index.js";
import { createSonde } from "../../src/core.js";
import { InvalidRequestError, UnsupportedOptionError } from "../../src/errors.js";
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
