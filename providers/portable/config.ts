/**
 * Resolves `new Sonde({ portable: {...} })` (arriving as `ProviderContext.extras`) into
 * the objects the loop uses, once per client: chat endpoints, search backend, fetcher,
 * job store and execution slots.
 */
import type { ProviderContext } from "../../src/provider.js";
import { registerSecret } from "../../src/redact.js";
import { openAICompatibleChat } from "./chat.js";
import { chatEndpoint, type Extras, searchConfig, storeConfig } from "./checks.js";
import { demoChatModel, demoFetcher, demoSearch } from "./demo/model.js";
import { defaultFetcher } from "./fetcher.js";
import { httpSearchBackend, type SearchConfig } from "./search.js";
import { checked, fetcherSchema, isSearchBackend } from "./settings.js";
import { Slots } from "./slots.js";
import { createFileStore, createFileStoreAt } from "./store/file.js";
import { createMemoryStore } from "./store/memory.js";
import type { ChatModel, Fetcher, JobStore, SearchBackend } from "./types.js";

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
