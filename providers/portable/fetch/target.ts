/**
 * The address check every hop passes before any connection: the URL's host is resolved
 * (IP literals as they are) and each address must be public unicast, unless the host is
 * named in `allowHosts`. The checked address is what the transport connects to.
 */
import { addressRefusal, isIpLiteral } from "./address.js";

/** One resolved address of a host. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to its addresses (like `dns.lookup(host, { all: true })`). */
export type HostLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export type Target =
  | { ok: true; hostname: string; address: ResolvedAddress | undefined }
  | { ok: false; reason: string };

const LOCAL_NAMES = /(^|\.)localhost\.?$/i;

/** `[::1]` → `::1`, `Example.org.` → `example.org`: how hosts are compared with `allowHosts`. */
export function hostKey(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
}

export async function checkTarget(
  url: URL,
  options: { lookup: HostLookup | undefined; allowHosts: ReadonlySet<string> },
): Promise<Target> {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return { ok: false, reason: `only http and https URLs are fetched, not ${url.protocol}` };
  const hostname = hostKey(url.hostname);
  const allowed = options.allowHosts.has(hostname);
  const hint = "; to read a local host on purpose, name it in the fetcher's allowHosts";
  if (isIpLiteral(hostname)) {
    const refusal = allowed ? undefined : addressRefusal(hostname);
    if (refusal) return { ok: false, reason: refusal + hint };
    return { ok: true, hostname, address: { address: hostname, family: hostname.includes(":") ? 6 : 4 } };
  }
  if (!options.lookup) {
    // No resolver in this runtime: refuse what is local by name; addresses cannot be checked.
    if (!allowed && LOCAL_NAMES.test(hostname))
      return { ok: false, reason: `${hostname} names this machine${hint}` };
    return { ok: true, hostname, address: undefined };
  }
  let addresses: readonly ResolvedAddress[];
  try {
    addresses = await options.lookup(hostname);
  } catch (error) {
    return { ok: false, reason: `${hostname} could not be resolved (${(error as Error).message})` };
  }
  if (!addresses.length) return { ok: false, reason: `${hostname} has no address` };
  if (!allowed) {
    for (const { address } of addresses) {
      const refusal = addressRefusal(address);
      if (refusal) return { ok: false, reason: `${hostname} resolves to ${refusal}${hint}` };
    }
  }
  return { ok: true, hostname, address: addresses[0]! };
}
