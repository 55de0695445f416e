/**
 * `sonde/tracing` and its optional peer `@opentelemetry/api`: the entry imports only the API's
 * types, loads it when the global provider is needed (seeing the provider an app registered
 * through its own import), and says what to install when it is missing.
 */
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, expect, it, vi } from "vitest";
import { MissingDependencyError } from "../../src/errors.js";
import { Sonde } from "../../src/index.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => {
  vi.restoreAllMocks();
  vi.resetModules();
  trace.disable();
  clearMocks();
});

/** A fresh copy of the entry, so nothing loaded by an earlier test is reused. */
const freshTracing = async () => import("../../src/tracing/index.js");

it("sondeTracing() traces on the provider the app registered through its own import", async () => {
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  const { sondeTracing } = await freshTracing();
  mockResearch("# Traced", { fail: { code: "server_error", message: "boom" } })
    .always()
    .register();
  const client = new Sonde({ openai: { apiKey: "sk-test-peer-0000" }, telemetry: sondeTracing(), env: {} });
  await client.research
    .start({ model: "openai:gpt-5.5-pro", query: "q" })
    .result()
    .catch(() => undefined);
  const [span] = exporter.getFinishedSpans();
  // The span kind and status are the API's own values, though the entry imports none of them.
  expect(span?.kind).toBe(SpanKind.CLIENT);
  expect(span?.status.code).toBe(SpanStatusCode.ERROR);
});

it("without @opentelemetry/api installed, sondeTracing() throws MissingDependencyError naming it", async () => {
  const real = process.getBuiltinModule;
  vi.spyOn(process, "getBuiltinModule").mockImplementation(((id: string) => {
    if (id !== "node:module") return real(id);
    return {
      createRequire: () => (name: string) => {
        throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
      },
    };
  }) as typeof process.getBuiltinModule);
  const { sondeTracing } = await freshTracing();
  const error = (() => {
    try {
      sondeTracing();
    } catch (e) {
      return e;
    }
  })();
  // A fresh module graph has its own error classes: `isInstance` is the cross-copy check.
  expect(MissingDependencyError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ packageName: "@opentelemetry/api" });
  expect((error as Error).message).toMatch(/npm install @opentelemetry\/api/);
  // A provider passed in needs nothing loaded.
  const tracerProvider = new BasicTracerProvider();
  expect(() => sondeTracing({ tracerProvider })).not.toThrow();
});

it("on a runtime that cannot load packages synchronously, it says to pass a provider", async () => {
  vi.spyOn(process, "getBuiltinModule").mockImplementation((() => undefined) as never);
  const { sondeTracing } = await freshTracing();
  const error = (() => {
    try {
      sondeTracing();
    } catch (e) {
      return e;
    }
  })();
  expect(MissingDependencyError.isInstance(error)).toBe(true);
  expect((error as Error).message).toMatch(/sondeTracing\(\{ tracerProvider \}\)/);
});
