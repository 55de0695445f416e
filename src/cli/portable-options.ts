/**
 * The portable engine configured from the command line: flags first, then the environment,
 * so `sonde research … --model portable:local/<model>` works without writing code. Keys are
 * read from the environment only (a flag would land in the shell history).
 */
import type { PortableSettings } from "../client.js";

type SearchProvider = Extract<PortableSettings["search"], { provider: string }>["provider"];

import { UsageError } from "./usage.js";

export interface PortableFlags {
  "chat-url"?: string | undefined;
  search?: string | undefined;
  "search-url"?: string | undefined;
  store?: string | undefined;
}

const searchKeyEnv: Record<string, string> = { tavily: "TAVILY_API_KEY", brave: "BRAVE_API_KEY" };

/** `portable` client settings for a job on `model`, or undefined when nothing is configured. */
export function portableSettings(
  model: string | undefined,
  flags: PortableFlags,
  env: Record<string, string | undefined>,
): PortableSettings | undefined {
  const chatURL = flags["chat-url"] ?? env.SONDE_CHAT_BASE_URL;
  const search = flags.search ?? env.SONDE_SEARCH_PROVIDER;
  const searchURL = flags["search-url"] ?? env.SONDE_SEARCH_BASE_URL;
  const store = flags.store;
  const portable = model?.startsWith("portable:") ?? false;
  const given = [
    flags["chat-url"] && "--chat-url",
    flags.search && "--search",
    flags["search-url"] && "--search-url",
  ];
  if (!portable && model !== undefined && given.some(Boolean)) {
    throw new UsageError(
      `${given.filter(Boolean).join(", ")} configure the portable engine; use a portable:<chat>/<model> id (e.g. portable:local/qwen3:32b).`,
      "research",
    );
  }
  const settings: PortableSettings = {};
  if (chatURL && portable) {
    // The endpoint is named by the id: portable:<chat>/<model> uses chat[<chat>].
    const name = model!.slice("portable:".length).split("/")[0]!;
    if (name === "demo")
      throw new UsageError("the offline demo (portable:demo/offline) takes no chat endpoint.");
    settings.chat = {
      [name]: { baseURL: chatURL, ...(env.SONDE_CHAT_API_KEY && { apiKey: env.SONDE_CHAT_API_KEY }) },
    };
  }
  if (search) {
    if (!["tavily", "brave", "searxng"].includes(search))
      throw new UsageError(`--search takes tavily, brave or searxng, not "${search}".`, "research");
    const apiKey = env[searchKeyEnv[search] ?? ""] ?? env.SONDE_SEARCH_API_KEY;
    settings.search = {
      provider: search as SearchProvider,
      ...(apiKey && { apiKey }),
      ...(searchURL && { baseURL: searchURL }),
    };
  } else if (searchURL) {
    throw new UsageError(
      "--search-url needs --search <tavily|brave|searxng> (or SONDE_SEARCH_PROVIDER).",
      "research",
    );
  }
  if (store) settings.store = { dir: store };
  return Object.keys(settings).length ? settings : undefined;
}
