/**
 * The Node side of the default fetcher, loaded lazily so the package's main entry stays
 * free of Node built-ins: the system resolver, and an undici transport that connects to
 * exactly the address that was checked (a host that answers differently at connect time,
 * DNS rebinding, is never asked again).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import type { LookupFunction } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";
import type { HostLookup, ResolvedAddress } from "./target.js";
import type { PageRequest, PageTransport } from "./transport.js";

export const systemLookup: HostLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/** A lookup that answers only the checked address, whatever name it is asked for. */
function pinned({ address, family }: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (e: null, all: ResolvedAddress[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** One agent per hop: its connections can only reach the address checked for that hop. */
export const pinnedTransport: PageTransport = async (request: PageRequest) => {
  if (!request.address) throw new Error(`no checked address for ${request.url.host}`);
  const agent = new Agent({ connect: { lookup: pinned(request.address) }, connections: 1 });
  try {
    const response = await undiciFetch(request.url, {
      headers: request.headers,
      signal: request.signal,
      redirect: "manual",
      dispatcher: agent,
    });
    // Closes once the body has been read or cancelled.
    void agent.close().catch(() => {});
    return response as unknown as Response;
  } catch (error) {
    void agent.destroy().catch(() => {});
    throw error;
  }
};
