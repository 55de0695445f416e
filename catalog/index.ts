import { gemini } from "./gemini.js";
import { hosted } from "./hosted.js";
import type { modelIds } from "./ids.js";
import { openai } from "./openai.js";
import { openrouter } from "./openrouter.js";
import { perplexity } from "./perplexity.js";
import { portable } from "./portable.js";
import { Catalog, type ModelInfo, type ToolType } from "./schema.js";

/** The catalog's known ids, as the literal tuple `ModelId` offers (a type: the list itself is `knownModelIds()`). */
export type { modelIds } from "./ids.js";
export * from "./schema.js";

/** Every research model Sonde knows, validated once at load. */
export const models: readonly ModelInfo[] = Object.freeze(
  Catalog.parse([...openai, ...gemini, ...openrouter, ...perplexity, ...hosted, ...portable]),
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

export interface ModelFilter {
  provider?: ModelInfo["provider"];
  /** Only models with all of these capabilities (boolean flags) true. */
  capabilities?: Partial<Record<Exclude<keyof ModelInfo["capabilities"], "tools">, boolean>>;
  /** Only models that accept this tool. */
  tool?: ToolType;
  /** Leave out retired models (default false: the catalog lists them so errors can name replacements). */
  excludeRetired?: boolean;
}

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
  return models.filter((m) => {
    if (filter.provider && m.provider !== filter.provider) return false;
    if (filter.tool && !m.capabilities.tools.includes(filter.tool)) return false;
    if (filter.excludeRetired && m.lifecycle.stage === "retired") return false;
    for (const [key, want] of Object.entries(filter.capabilities ?? {})) {
      if (want !== undefined && m.capabilities[key as keyof typeof filter.capabilities] !== want)
        return false;
    }
    return true;
  });
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
  const exact = models.find((m) => m.id === id);
  if (exact) return exact;
  const colon = id.indexOf(":");
  if (colon < 1) return undefined;
  const provider = id.slice(0, colon);
  const name = id.slice(colon + 1);
  // A dated snapshot keeps its own name on the wire: pinning a snapshot is the point of asking for one.
  const alias = models.find((m) => m.provider === provider && m.aliases?.includes(name));
  if (alias) return { ...alias, model: name };
  const family = models.find(
    (m) => m.id.endsWith("*") && id.startsWith(m.id.slice(0, -1)) && name.length > 0,
  );
  return family && { ...family, id, model: name };
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
  const target = id.toLowerCase();
  return models
    .filter((m) => !m.id.endsWith("*") && m.lifecycle.stage !== "retired")
    .map((m) => ({ id: m.id, distance: distance(target, m.id.toLowerCase()) }))
    .sort((a, b) => a.distance - b.distance)
    .slice(0, limit)
    .map((m) => m.id);
}

/** @internal Edit distance (Levenshtein); also ranks misspelt client options. */
export function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}
