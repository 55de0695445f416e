/**
 * `sonde/providers/portable`: the portable local research engine (ARCHITECTURE.md, "The portable engine") and its
 * building blocks: job stores, the default fetcher and HTML-to-text, and the offline
 * demo's model, search and fetcher.
 */
export { portableAdapter } from "./adapter.js";
export { CORPUS_CAP_BYTES } from "./corpus.js";
export { type DemoDocument, demoCorpus } from "./demo/corpus.js";
export { corpusFetcher, corpusSearch, demoChatModel } from "./demo/model.js";
export {
  type DefaultFetcherOptions,
  defaultFetcher,
  fetchTransport,
  type HostLookup,
  type PageRequest,
  type PageTransport,
  type ResolvedAddress,
  ROBOTS_AGENT,
  USER_AGENT,
} from "./fetcher.js";
export { htmlToText } from "./html.js";
export { type Budget, defaultBudget } from "./operations.js";
export type { SearchConfig, SearchProvider } from "./search.js";
export { type PortableSettings, portableSettingsSchema } from "./settings.js";
export { RETENTION_MS } from "./spec.js";
export { MAX_OUTPUT_TOKENS } from "./steps/ask.js";
export {
  createFileStore,
  type FileHandleLike,
  type FileStoreOptions,
  type FileSystem,
} from "./store/file.js";
export { createMemoryStore } from "./store/memory.js";
export type {
  ChatMessage,
  ChatModel,
  ChatRequest,
  ChatResponse,
  Fence,
  FetchedPage,
  Fetcher,
  JobRecord,
  JobStore,
  Lease,
  Receipt,
  SearchBackend,
  SearchResult,
  StoredEvent,
  StoredRequest,
} from "./types.js";
