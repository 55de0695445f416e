/**
 * Built-in HTTP search backends (`portable.search: { provider, apiKey?, baseURL? }`):
 * Tavily (`POST /search`, bearer key), Brave (`GET /res/v1/web/search`,
 * `X-Subscription-Token`) and SearXNG (`GET /search?format=json`, self-hosted).
 */
import type { RetryPolicy } from "../../src/provider.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import { createHttpClient } from "../../src/transport/http.js";
import { withRetry } from "../../src/transport/retry.js";
import { searchDefaults } from "./settings.js";
import type { SearchBackend, SearchResult } from "./types.js";
import { BraveResponse, SearxngResponse, TavilyResponse } from "./wire/search-apis.js";

export type SearchProvider = "tavily" | "brave" | "searxng";

export interface SearchConfig {
  provider: SearchProvider;
  apiKey?: string | undefined;
  baseURL?: string | undefined;
  /** Results per query. @defaultValue 5 */
  maxResults?: number | undefined;
}

interface Transport {
  fetch: typeof globalThis.fetch;
  clock: () => Date;
  retry: RetryPolicy;
}

const stripTags = (text: string | null | undefined) =>
  text ? text.replace(/<[^>]+>/g, "").replace(/&(amp|quot|#39|lt|gt);/g, (m) => entities[m] ?? m) : undefined;
const entities: Record<string, string> = {
  "&amp;": "&",
  "&quot;": '"',
  "&#39;": "'",
  "&lt;": "<",
  "&gt;": ">",
};

export function httpSearchBackend(config: SearchConfig, transport: Transport): SearchBackend {
  const baseURL = config.baseURL ?? searchDefaults[config.provider].baseURL ?? "";
  const count = config.maxResults ?? 5;
  const headers: Record<string, string | undefined> =
    config.provider === "tavily"
      ? { authorization: config.apiKey && `Bearer ${config.apiKey}` }
      : config.provider === "brave"
        ? { "x-subscription-token": config.apiKey, accept: "application/json" }
        : { accept: "application/json", ...(config.apiKey && { authorization: `Bearer ${config.apiKey}` }) };
  const http = createHttpClient({
    provider: "portable",
    baseURL,
    headers,
    fetch: transport.fetch,
    clock: transport.clock,
    timeoutMs: 30_000,
  });
  const call = async (query: string, signal: AbortSignal): Promise<SearchResult[]> => {
    switch (config.provider) {
      case "tavily": {
        const body = await http
          .post("search", { json: { query, max_results: count, search_depth: "basic" }, signal })
          .json<unknown>();
        return (TavilyResponse.parse(body, UNCOMPILED).results ?? []).map((r) => ({
          url: r.url,
          title: r.title ?? undefined,
          snippet: r.content ?? undefined,
        }));
      }
      case "brave": {
        const body = await http
          .get("res/v1/web/search", { searchParams: { q: query, count }, signal })
          .json<unknown>();
        return (BraveResponse.parse(body, UNCOMPILED).web?.results ?? []).map((r) => ({
          url: r.url,
          title: stripTags(r.title),
          snippet: stripTags(r.description),
        }));
      }
      case "searxng": {
        const body = await http
          .get("search", { searchParams: { q: query, format: "json" }, signal })
          .json<unknown>();
        return (SearxngResponse.parse(body, UNCOMPILED).results ?? []).slice(0, count).map((r) => ({
          url: r.url,
          title: r.title ?? undefined,
          snippet: r.content ?? undefined,
        }));
      }
    }
  };
  return {
    search: (query, { signal }) =>
      // A search is a read: retrying one that got a 429/5xx costs nothing extra.
      withRetry(() => call(query, signal), { policy: transport.retry, signal }),
  };
}
