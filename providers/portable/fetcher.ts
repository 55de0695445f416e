/**
 * The default fetcher. Its work (address checks, undici, readability, pdf.js, robots.txt)
 * is loaded on the first fetch, so importing the package pulls in none of it.
 */

import { InvalidRequestError } from "../../src/errors.js";
import type { PageSettings } from "./fetch/page.js";
import type { HostLookup } from "./fetch/target.js";
import { fetchTransport, type PageTransport } from "./fetch/transport.js";
import type { Fetcher } from "./types.js";

export type { HostLookup, ResolvedAddress } from "./fetch/target.js";
export { fetchTransport, type PageRequest, type PageTransport } from "./fetch/transport.js";

/** Names the engine and where to read about it, as robots.txt etiquette asks. */
export const USER_AGENT = "sonde-portable/0.1 (+https://www.npmjs.com/package/sonde)";
/** The token robots.txt groups are matched against (`User-agent: sonde-portable`). */
export const ROBOTS_AGENT = "sonde-portable";

export interface DefaultFetcherOptions {
  /**
   * Hosts that may be read although they are local or private (an intranet search, a local
   * model's docs): host names or IP literals, matched exactly. Nothing is allowed by default.
   */
  allowHosts?: readonly string[];
  /**
   * Resolves host names for the check. `false`: names are not resolved here (only IP
   * literals and `localhost` names are checked), for a transport that resolves on its own,
   * such as `fetchTransport(fetch)` under msw in tests.
   * @defaultValue the system resolver (`dns.lookup`) on Node
   */
  lookup?: HostLookup | false;
  /**
   * Sends one checked request (no redirects followed). The default on Node connects to the
   * checked address only (undici); a replacement takes over that duty.
   */
  transport?: PageTransport;
  /** Where the runtime has no Node sockets: the fetch to send through. Addresses of host names cannot be checked there. */
  fetch?: typeof globalThis.fetch;
  /** @defaultValue 5 */
  maxRedirects?: number;
  /** Bytes read from one response at most (a longer HTML or text body is cut; a longer PDF is refused). @defaultValue 10_000_000 */
  maxBytes?: number;
  /** Time for one fetch, redirects and robots.txt included. @defaultValue 30_000 */
  timeoutMs?: number;
  /** Honour robots.txt for `sonde-portable` (cached per site for a day). @defaultValue true */
  robots?: boolean;
  /** Requests in flight per host at most. @defaultValue 2 */
  perHostConcurrency?: number;
  /** @defaultValue USER_AGENT */
  userAgent?: string;
}

const isNode = () =>
  typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === "string";

async function settingsOf(options: DefaultFetcherOptions): Promise<PageSettings> {
  // Pinning needs a checked address: without a resolver, requests go through plain fetch.
  const node =
    isNode() && options.lookup !== false && (options.lookup === undefined || !options.transport)
      ? await import("./fetch/node.js")
      : undefined;
  const transport =
    options.transport ??
    node?.pinnedTransport ??
    fetchTransport(options.fetch ?? ((...args) => globalThis.fetch(...args)));
  return {
    allowHosts: options.allowHosts ?? [],
    lookup: options.lookup === false ? undefined : (options.lookup ?? node?.systemLookup),
    transport,
    maxRedirects: options.maxRedirects ?? 5,
    maxBytes: options.maxBytes ?? 10_000_000,
    timeoutMs: options.timeoutMs ?? 30_000,
    robots: options.robots ?? true,
    perHostConcurrency: options.perHostConcurrency ?? 2,
    userAgent: options.userAgent ?? USER_AGENT,
    robotsAgent: ROBOTS_AGENT,
  };
}

/**
 * The fetcher the portable engine uses unless `portable.fetcher` is given. Every hop is
 * resolved and checked before it connects: loopback, private, link-local (cloud metadata),
 * CGNAT, unique-local and other special addresses are refused (a gap names the URL and
 * why) unless the host is in `allowHosts`; on Node the connection goes to the checked
 * address. robots.txt is honoured, requests per host are limited, and the body becomes
 * text: an HTML page's main article (or the whole page, flagged), a PDF page by page, any
 * text by its declared or sniffed charset.
 * @example
 * ```ts
 * import { defaultFetcher } from "sonde/providers/portable";
 *
 * const client = new Sonde({
 *   portable: { fetcher: defaultFetcher({ allowHosts: ["wiki.intranet.example"] }), chat: { local: { baseURL } } },
 * });
 * ```
 */
export function defaultFetcher(options: DefaultFetcherOptions = {}): Fetcher {
  checkOptions(options);
  let loaded: Promise<Fetcher> | undefined;
  return {
    async fetch(url, init) {
      loaded ??= Promise.all([import("./fetch/page.js"), settingsOf(options)]).then(([page, settings]) =>
        page.createPageFetcher(settings),
      );
      return (await loaded).fetch(url, init);
    },
  };
}

function checkOptions(options: DefaultFetcherOptions): void {
  const bad = (message: string) => new InvalidRequestError(`defaultFetcher: ${message}.`);
  const { allowHosts, lookup, transport } = options;
  if (
    allowHosts !== undefined &&
    !(Array.isArray(allowHosts) && allowHosts.every((h) => typeof h === "string" && h))
  )
    throw bad(
      'allowHosts must be an array of host names or IP literals (e.g. ["wiki.corp.example", "127.0.0.1"])',
    );
  if (lookup !== undefined && lookup !== false && typeof lookup !== "function")
    throw bad("lookup must be a function (hostname) => Promise<{ address, family }[]>, or false");
  if (transport !== undefined && typeof transport !== "function")
    throw bad("transport must be a function (request) => Promise<Response>");
  const counts = { maxRedirects: 0, maxBytes: 1, timeoutMs: 1, perHostConcurrency: 1 } as const;
  for (const [name, least] of Object.entries(counts)) {
    const value = options[name as keyof typeof counts];
    if (value !== undefined && !(Number.isInteger(value) && value >= least))
      throw bad(`${name} must be an integer of at least ${least}; got ${String(value)}`);
  }
}
