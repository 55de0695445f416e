import type * as OpenTelemetry from "@opentelemetry/api";
import { MissingDependencyError } from "../errors.js";

let loaded: typeof OpenTelemetry | undefined;

/**
 * `@opentelemetry/api`, loaded on first need from the user's project: it is an optional peer,
 * so importing `sonde/tracing` never needs it, and only the global tracer provider (the
 * default of `sondeTracing()`) does. Synchronous, through `require`, as `sonde/testing/msw`
 * loads msw. The API keeps its global provider under a process-wide key, so the copy loaded
 * here sees the provider an app registered through its own `import`.
 */
export function loadOpenTelemetry(): typeof OpenTelemetry {
  if (loaded) return loaded;
  const module = globalThis.process?.getBuiltinModule?.("node:module");
  if (!module)
    throw new MissingDependencyError(
      "@opentelemetry/api",
      "sondeTracing() without a tracer reads OpenTelemetry's global tracer provider, which this runtime cannot " +
        "load for Sonde: pass your provider, sondeTracing({ tracerProvider }), or a tracer, sondeTracing({ tracer }).",
    );
  const require = module.createRequire(typeof __filename === "string" ? __filename : import.meta.url);
  try {
    loaded = require("@opentelemetry/api") as typeof OpenTelemetry;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new MissingDependencyError(
      "@opentelemetry/api",
      "sonde/tracing reports jobs as OpenTelemetry spans, and @opentelemetry/api is not installed: run " +
        "`npm install @opentelemetry/api` (an optional peer dependency of sonde, needed only for tracing).",
      { cause: error },
    );
  }
  return loaded;
}
