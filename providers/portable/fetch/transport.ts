import type { ResolvedAddress } from "./target.js";

/** One request of the default fetcher, after its target passed the address check. */
export interface PageRequest {
  url: URL;
  /** The checked address to connect to; `undefined` where the runtime has no resolver. */
  address: ResolvedAddress | undefined;
  headers: Record<string, string>;
  signal: AbortSignal;
}

/**
 * Sends one request without following redirects (the fetcher checks every hop). On Node
 * the default connects to `address` only; a replacement takes over that duty.
 */
export type PageTransport = (request: PageRequest) => Promise<Response>;

/**
 * A transport over a `fetch` function, for runtimes without Node sockets: it cannot pin addresses.
 * @example
 * ```ts
 * import { defaultFetcher, fetchTransport } from "sonde/providers/portable";
 *
 * // Bun, Deno or workers: pages through fetch; host names cannot be pinned to checked addresses.
 * const fetcher = defaultFetcher({ transport: fetchTransport(fetch), lookup: false });
 * ```
 */
export function fetchTransport(fetchImpl: typeof globalThis.fetch): PageTransport {
  return ({ url, headers, signal }) => fetchImpl(url, { headers, signal, redirect: "manual" });
}
