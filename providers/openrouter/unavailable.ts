/**
 * OpenRouter's answer when it no longer routes a model: 404 "No endpoints found for …", or
 * (since 2026-08-19) an `availability` code such as `no_endpoints` or `model_deprecated`
 * (WIRE.md §6). Whether OpenRouter still serves Perplexity's Sonar models after
 * Perplexity retired them is unconfirmed, so the catalog names a replacement and this turns
 * that answer into an error that names it instead of a bare "pick another model".
 */
import { listModels } from "../../catalog/index.js";
import type { ModelInfo } from "../../catalog/schema.js";
import { ModelUnavailableError, SondeError } from "../../src/errors.js";

/** Availability codes that mean the model is gone, not busy (`retryable: false` in OpenRouter's vocabulary). */
const gone = new Set(["model_not_found", "no_endpoints", "model_deprecated", "model_unavailable_upstream"]);

function isUnavailable(error: SondeError): boolean {
  if (error.providerCode !== undefined && gone.has(error.providerCode)) return true;
  if (error.status === 404) return true;
  return /no endpoints found|model_deprecated|no_endpoints/i.test(error.message);
}

/** The catalog's replacement and its siblings on the same engine (`perplexity:medium`, `perplexity:high`). */
function alternativesOf(info: ModelInfo): string[] {
  const replacement = info.lifecycle.replacement;
  if (!replacement) return [];
  const provider = replacement.slice(0, replacement.indexOf(":")) as ModelInfo["provider"];
  const siblings = listModels({ provider, excludeRetired: true })
    .map((m) => m.id)
    .filter((id) => id !== replacement && !id.endsWith("*"));
  return [replacement, ...siblings];
}

export function unavailableModel(error: unknown, info: ModelInfo): unknown {
  if (!SondeError.isInstance(error) || !isUnavailable(error) || !info.lifecycle.replacement) return error;
  return new ModelUnavailableError(
    info.id,
    alternativesOf(info),
    `openrouter: ${error.message.replace(/^openrouter \d+: /, "")} OpenRouter no longer serves ${info.model}.`,
    {
      provider: "openrouter",
      ...(error.status !== undefined && { status: error.status }),
      ...(error.requestId !== undefined && { requestId: error.requestId }),
      ...(error.providerCode !== undefined && { providerCode: error.providerCode }),
      cause: error,
    },
  );
}
