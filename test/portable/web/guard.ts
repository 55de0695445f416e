/**
 * The network guard of the fetcher tests: it replaces `net.connect` (what undici opens
 * sockets with), records every address a connection would reach, and lets through only
 * 127.0.0.1, the loopback test server. Anything else is recorded and never connected,
 * so even a broken fetcher cannot send a packet elsewhere. Host names reach an address
 * only through the lookup the connection carries; a name without one is refused too.
 */
import net from "node:net";
import { afterEach, beforeEach, vi } from "vitest";
import type { HostLookup, ResolvedAddress } from "../../../providers/portable/index.js";

export const TEST_SERVER_ADDRESS = "127.0.0.1";

export function guardConnections(): { attempts: string[] } {
  const state = { attempts: [] as string[] };
  const real = net.connect;
  beforeEach(() => {
    state.attempts.length = 0;
    vi.spyOn(net, "connect").mockImplementation(((
      options: net.NetConnectOpts & { lookup?: net.LookupFunction },
    ) => {
      const host = (options as net.TcpNetConnectOpts).host ?? "localhost";
      if (net.isIP(host)) {
        state.attempts.push(host);
        if (host !== TEST_SERVER_ADDRESS) throw new Error(`test guard: refused a connection to ${host}`);
        return real(options);
      }
      const lookup = options.lookup;
      if (!lookup) {
        state.attempts.push(`unresolved:${host}`);
        throw new Error(`test guard: refused to resolve ${host} through the system resolver`);
      }
      const guarded: net.LookupFunction = (hostname, lookupOptions, callback) =>
        lookup(hostname, lookupOptions, ((
          error: Error | null,
          address: string | ResolvedAddress[],
          family?: number,
        ) => {
          const all = Array.isArray(address) ? address.map((a) => a.address) : [address];
          state.attempts.push(...all);
          if (error || all.some((a) => a !== TEST_SERVER_ADDRESS))
            return callback(
              error ?? new Error(`test guard: refused a connection to ${all.join(", ")}`),
              "",
              4,
            );
          (callback as (...args: unknown[]) => void)(null, address, family);
        }) as never);
      return real({ ...options, lookup: guarded } as net.NetConnectOpts);
    }) as typeof net.connect);
  });
  afterEach(() => vi.restoreAllMocks());
  return state;
}

/** A resolver from a table; a function entry answers per call (n = 0, 1, …), to change its answer. */
export function tableLookup(table: Record<string, string[] | ((n: number) => string[])>) {
  const calls: string[] = [];
  const lookup: HostLookup = async (hostname) => {
    const entry = table[hostname];
    const n = calls.filter((h) => h === hostname).length;
    calls.push(hostname);
    if (!entry) throw new Error(`ENOTFOUND ${hostname}`);
    const addresses = typeof entry === "function" ? entry(n) : entry;
    return addresses.map((address) => ({ address, family: net.isIP(address) === 6 ? 6 : 4 }));
  };
  return { lookup, calls };
}
