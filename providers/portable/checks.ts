/**
 * The portable section of the client options (`ProviderContext.extras`), checked: what
 * `validate()` and `attach()` refuse before a job runs. Resolving it into the objects the
 * loop uses is config.ts, loaded with the engine.
 */
import { AuthenticationError, InvalidRequestError } from "../../src/errors.js";
import type { ProviderSettings } from "../../src/provider.js";
import type { SearchConfig } from "./search.js";
import {
  checked,
  fetcherSchema,
  isSearchBackend,
  portableSettingsSchema,
  searchDefaults,
  searchSchema,
  storeSchema,
} from "./settings.js";
import type { JobStore, SearchBackend } from "./types.js";

export const DEMO_MODEL = "demo/offline";

const predefined = {
  openai: "https://api.openai.com/v1",
  openrouter: "https://openrouter.ai/api/v1",
} as const;

export type Extras = Record<string, unknown> & {
  chat?: Record<string, { baseURL?: unknown; apiKey?: unknown }>;
  search?: unknown;
  fetcher?: unknown;
  store?: unknown;
  maxConcurrentJobs?: unknown;
  leaseMs?: unknown;
  /** `SONDE_STORE_DIR` from the client's env: the default store's directory. */
  storeDir?: unknown;
  providerKeys?: { openai?: ProviderSettings; openrouter?: ProviderSettings };
};

/** `portable:<chat>/<model>` → chat endpoint name and the endpoint's model name. */
export function splitModel(providerModel: string): { chat: string; model: string } {
  const slash = providerModel.indexOf("/");
  if (slash < 1 || slash === providerModel.length - 1) {
    throw new InvalidRequestError(
      `Portable model ids are portable:<chat>/<model> (e.g. portable:openrouter/openai/gpt-5-mini); got "portable:${providerModel}".`,
    );
  }
  return { chat: providerModel.slice(0, slash), model: providerModel.slice(slash + 1) };
}

/** Field-level checks of the portable config for one request; throws typed errors. */
export function validateConfig(providerModel: string, extras: Extras, needsWeb: boolean): void {
  const { chat, model } = splitModel(providerModel);
  if (chat === "demo") {
    if (providerModel !== DEMO_MODEL)
      throw new InvalidRequestError(
        `Unknown demo model "portable:${providerModel}": the offline demo is portable:${DEMO_MODEL}.`,
      );
  } else {
    chatEndpoint(chat, extras, model);
    if (needsWeb && extras.search === undefined) {
      throw new InvalidRequestError(
        "The portable engine needs a search backend for web research: pass portable: { search: { provider: " +
          '"tavily" | "brave" | "searxng", apiKey, baseURL } } (or an object with search(query, { signal })) to ' +
          "new Sonde(), or give sources.documents (with web: false) or sources.urls.",
      );
    }
  }
  // Checked for the demo too: start() resolves the whole config, whichever model runs.
  checkObjects(extras);
  const { shape } = portableSettingsSchema;
  checked(shape.maxConcurrentJobs, extras.maxConcurrentJobs);
  checked(shape.leaseMs, extras.leaseMs);
}

export function chatEndpoint(name: string, extras: Extras, model: string) {
  const configured = extras.chat?.[name];
  if (configured) {
    if (typeof configured.baseURL !== "string" || !/^https?:\/\//.test(configured.baseURL))
      throw new InvalidRequestError(
        `portable.chat.${name}.baseURL must be an http(s) URL (e.g. "http://localhost:11434/v1").`,
      );
    return {
      baseURL: configured.baseURL,
      apiKey: typeof configured.apiKey === "string" ? configured.apiKey : undefined,
      flavor:
        name === "openai"
          ? ("openai" as const)
          : name === "openrouter"
            ? ("openrouter" as const)
            : ("generic" as const),
      headers: {},
    };
  }
  if (name === "openai" || name === "openrouter") {
    const settings = extras.providerKeys?.[name] ?? {};
    if (!settings.apiKey) {
      const env = name === "openai" ? "OPENAI_API_KEY" : "OPENROUTER_API_KEY";
      throw new AuthenticationError(
        `No ${name} API key for portable:${name}/${model}: set ${env} or pass { ${name}: { apiKey } } to new Sonde().`,
        { provider: "portable", envVar: env },
      );
    }
    const headers: Record<string, string | undefined> =
      name === "openai"
        ? { "openai-organization": str(settings.organization), "openai-project": str(settings.project) }
        : { "http-referer": str(settings.appUrl), "x-title": str(settings.appName) };
    const flavor: "openai" | "openrouter" = name;
    return { baseURL: settings.baseURL ?? predefined[name], apiKey: settings.apiKey, flavor, headers };
  }
  const known = ["openai", "openrouter", ...Object.keys(extras.chat ?? {})];
  throw new InvalidRequestError(
    `No chat endpoint named "${name}" for portable:${name}/${model}. Configure it with new Sonde({ portable: { chat: { ${name}: { baseURL, apiKey } } } }); known: ${[...new Set(known)].join(", ")}.`,
  );
}

const str = (value: unknown) => (typeof value === "string" && value ? value : undefined);

export function searchConfig(search: unknown): SearchBackend | SearchConfig {
  const config = checked(searchSchema, search);
  if (isSearchBackend(config)) return config;
  const { provider } = config;
  if (searchDefaults[provider].needsKey && !config.apiKey)
    throw new AuthenticationError(`portable.search: ${provider} needs an apiKey.`, { provider: "portable" });
  if (!config.baseURL && !searchDefaults[provider].baseURL)
    throw new InvalidRequestError(`portable.search: ${provider} needs the baseURL of your instance.`);
  return config;
}

export function storeConfig(store: unknown): JobStore | { dir: string } {
  const config = checked(storeSchema, store);
  return "putJob" in config ? config : { dir: config.dir };
}

/** The objects of the config that resolving it reads (search, fetcher, store): `attach()` checks them at once. */
export function checkObjects(extras: Extras): void {
  if (extras.search !== undefined) searchConfig(extras.search);
  if (extras.fetcher !== undefined) checked(fetcherSchema, extras.fetcher);
  if (extras.store !== undefined) storeConfig(extras.store);
}
