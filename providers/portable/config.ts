/**
 * Resolves `new Sonde({ portable: {...} })` (arriving as `ProviderContext.extras`) into
 * the objects the loop uses, once per client: chat endpoints, search backend, fetcher,
 * job store and execution slots.
 */
import { AuthenticationError, InvalidRequestError } from "../../src/errors.js";
import type { ProviderContext, ProviderSettings } from "../../src/provider.js";
import { registerSecret } from "../../src/redact.js";
import { openAICompatibleChat } from "./chat.js";
import { demoChatModel, demoFetcher, demoSearch } from "./demo/model.js";
import { defaultFetcher } from "./fetcher.js";
import { httpSearchBackend, type SearchConfig, searchDefaults } from "./search.js";
import {
  checked,
  fetcherSchema,
  isSearchBackend,
  portableSettingsSchema,
  searchSchema,
  storeSchema,
} from "./settings.js";
import { Slots } from "./slots.js";
import { createFileStore, createFileStoreAt } from "./store/file.js";
import { createMemoryStore } from "./store/memory.js";
import type { ChatModel, Fetcher, JobStore, SearchBackend } from "./types.js";

export const DEMO_MODEL = "demo/offline";

const predefined = {
  openai: "https://api.openai.com/v1",
  openrouter: "https://openrouter.ai/api/v1",
} as const;

type Extras = Record<string, unknown> & {
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
  if (extras.search !== undefined) searchConfig(extras.search);
  if (extras.fetcher !== undefined) checked(fetcherSchema, extras.fetcher);
  if (extras.store !== undefined) checked(storeSchema, extras.store);
  const { shape } = portableSettingsSchema;
  checked(shape.maxConcurrentJobs, extras.maxConcurrentJobs);
  checked(shape.leaseMs, extras.leaseMs);
}

function chatEndpoint(name: string, extras: Extras, model: string) {
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

function searchConfig(search: unknown): SearchBackend | SearchConfig {
  const config = checked(searchSchema, search);
  if (isSearchBackend(config)) return config;
  const { provider } = config;
  if (searchDefaults[provider].needsKey && !config.apiKey)
    throw new AuthenticationError(`portable.search: ${provider} needs an apiKey.`, { provider: "portable" });
  if (!config.baseURL && !searchDefaults[provider].baseURL)
    throw new InvalidRequestError(`portable.search: ${provider} needs the baseURL of your instance.`);
  return config;
}

function storeConfig(store: unknown): JobStore | { dir: string } {
  const config = checked(storeSchema, store);
  return "putJob" in config ? config : { dir: config.dir };
}

/** Everything a client's portable jobs share. */
export interface Resolved {
  store: JobStore;
  storeKey: string;
  slots: Slots;
  /** How long a runner's lease on a job lasts unrenewed (stores with leases). */
  leaseMs: number | undefined;
  chatFor(name: string): ChatModel;
  search: SearchBackend | undefined;
  fetcher: Fetcher;
  /** The demo runs on its own search and fetcher (and never the network). */
  demo: { store: JobStore; storeKey: string; search: SearchBackend; fetcher: Fetcher };
}

const resolved = new WeakMap<ProviderContext, Resolved>();
const storeIds = new WeakMap<JobStore, string>();
let anonymousStores = 0;

export function storeKeyOf(store: JobStore): string {
  if (store.id) return store.id;
  let id = storeIds.get(store);
  if (!id) {
    id = `custom:${++anonymousStores}`;
    storeIds.set(store, id);
  }
  return id;
}

const isNode = () =>
  typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === "string";

/**
 * A default store (when `portable.store` is not given): files under `SONDE_STORE_DIR` if set,
 * else `~/.sonde/portable` (the demo: `<tmpdir>/sonde-demo-<uid>`) on Node; memory elsewhere.
 */
function defaultStore(where: "home" | "tmp", extras: Extras, logger: ProviderContext["logger"]): JobStore {
  const dir = typeof extras.storeDir === "string" && extras.storeDir ? extras.storeDir : undefined;
  if (dir) return createFileStore({ dir });
  if (!isNode()) {
    logger.warn(
      "portable: no file system in this runtime; jobs are kept in memory (pass portable.store to persist them).",
    );
    return createMemoryStore();
  }
  return createFileStoreAt(async () => {
    const [os, path] = await Promise.all([import("node:os"), import("node:path")]);
    return where === "home"
      ? path.join(os.homedir(), ".sonde", "portable")
      : // Per user: a shared temporary directory must not mix (or expose) users' jobs.
        path.join(os.tmpdir(), `sonde-demo-${userId(os)}`);
  }, `file:default-${where}`);
}

function userId(os: typeof import("node:os")): string {
  try {
    const { uid, username } = os.userInfo();
    return uid >= 0 ? String(uid) : username.replace(/[^A-Za-z0-9_-]/g, "_");
  } catch {
    return "user";
  }
}

function searchBackendOf(
  search: SearchBackend | SearchConfig | undefined,
  context: ProviderContext,
): SearchBackend | undefined {
  if (search === undefined) return undefined;
  if (isSearchBackend(search)) return search;
  registerSecret(search.apiKey);
  return httpSearchBackend(search, { fetch: context.fetch, clock: context.clock, retry: context.retry });
}

export function resolveConfig(context: ProviderContext): Resolved {
  const known = resolved.get(context);
  if (known) return known;
  const extras = context.extras as Extras;
  const chats = new Map<string, ChatModel>();
  const search = extras.search === undefined ? undefined : searchConfig(extras.search);
  const userStore = extras.store === undefined ? undefined : storeConfig(extras.store);
  let store: JobStore | undefined;
  let demoStore: JobStore | undefined;
  const storeOf = (config: JobStore | { dir: string }) =>
    "putJob" in config ? config : createFileStore({ dir: config.dir });
  const result: Resolved = {
    get store() {
      store ??= userStore ? storeOf(userStore) : defaultStore("home", extras, context.logger);
      return store;
    },
    get storeKey() {
      return storeKeyOf(result.store);
    },
    slots: new Slots(typeof extras.maxConcurrentJobs === "number" ? extras.maxConcurrentJobs : 2),
    leaseMs: typeof extras.leaseMs === "number" ? extras.leaseMs : undefined,
    chatFor(name) {
      let chat = chats.get(name);
      if (!chat) {
        const endpoint = chatEndpoint(name, extras, "");
        registerSecret(endpoint.apiKey);
        chat = openAICompatibleChat({
          name,
          baseURL: endpoint.baseURL,
          apiKey: endpoint.apiKey,
          fetch: context.fetch,
          clock: context.clock,
          retry: context.retry,
          headers: endpoint.headers,
          flavor: endpoint.flavor,
        });
        chats.set(name, chat);
      }
      return chat;
    },
    search: searchBackendOf(search, context),
    fetcher:
      extras.fetcher !== undefined
        ? checked(fetcherSchema, extras.fetcher)
        : defaultFetcher({ fetch: context.fetch }),
    demo: {
      get store() {
        demoStore ??= userStore ? result.store : defaultStore("tmp", extras, context.logger);
        return demoStore;
      },
      get storeKey() {
        return storeKeyOf(result.demo.store);
      },
      search: demoSearch,
      fetcher: demoFetcher,
    },
  };
  resolved.set(context, result);
  return result;
}

export const demoChat: ChatModel = demoChatModel;
