import { gemini } from "./gemini.js";
import { hosted } from "./hosted.js";
import type { modelIds } from "./ids.js";
import { findIn, listIn, type ModelFilter, nearestIn } from "./lookup.js";
import { openai } from "./openai.js";
import { openrouter } from "./openrouter.js";
import { perplexity } from "./perplexity.js";
import { portable } from "./portable.js";
import { Catalog, type ModelInfo } from "./schema.js";

/** The catalog's known ids, as the literal tuple `ModelId` offers (a type: the list itself is `knownModelIds()`). */
export type { modelIds } from "./ids.js";
export { distance, type ModelFilter } from "./lookup.js";
export * from "./schema.js";

/** Every research model Sonde knows, validated once at load. */
export const models: readonly ModelInfo[] = Object.freeze(
  Catalog.parse([...openai, ...gemini, ...openrouter, ...perplexity, ...hosted, ...portable], {
    jitless: true,
  }),
);

/** @internal Ids worth completing in an editor: every concrete id not retired (families excluded). */
export function knownModelIds(): string[] {
  return models.filter((m) => !m.id.endsWith("*") && m.lifecycle.stage !== "retired").map((m) => m.id);
}

/**
 * A model id: the catalog's known ids (offered by editors), `portable:<chat>/<model>`, or any
 * other string (validated at run time, with suggestions).
 */
export type ModelId = (typeof modelIds)[number] | `portable:${string}/${string}` | (string & {});

/**
 * The catalog's entries, optionally of one provider and without the retired ones.
 * @example
 * ```ts
 * import { listModels } from "sonde/catalog";
 *
 * const gemini = listModels({ provider: "gemini", excludeRetired: true }).map((m) => m.id);
 * ```
 */
export function listModels(filter: ModelFilter = {}): ModelInfo[] {
  return listIn(models, filter);
}

/**
 * The catalog entry for `provider:model`: an exact id, a provider alias (dated
 * snapshot), or a family entry (`portable:*`). The returned entry's `id` and `model`
 * are those of the request, so family members keep their own names.
 * @example
 * ```ts
 * import { findModel } from "sonde/catalog";
 *
 * const info = findModel("openai:gpt-5.5-pro");
 * console.log(info?.provider, info?.lifecycle, info?.pricing);
 * ```
 */
export function findModel(id: string): ModelInfo | undefined {
  return findIn(models, id);
}

/**
 * Up to `limit` catalog ids closest to `id` (edit distance), for "did you mean" messages.
 * Retired models are left out: a suggestion must be a model the user can start.
 * @example
 * ```ts
 * import { nearestModels } from "sonde/catalog";
 *
 * nearestModels("openai:gpt5-pro"); // the closest current ids, "openai:gpt-5.5-pro" first
 * ```
 */
export function nearestModels(id: string, limit = 3): string[] {
  return nearestIn(models, id, limit);
}
