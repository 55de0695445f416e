/**
 * Every test process may reach loopback only (127.0.0.0/8, [::1]). This guard sits under all
 * code under test: a host name other than localhost is never sent to a resolver, a socket to
 * any other address is refused before it connects, and the test that tried fails.
 */
import dns from "node:dns";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import { afterEach, expect } from "vitest";

const attempts: string[] = [];

const isLoopbackAddress = (address: string) =>
  /^127\.\d+\.\d+\.\d+$/.test(address) || address === "::1" || /^::ffff:127\./i.test(address);
const bare = (host: string) => host.replace(/^\[|\]$/g, "");
// Reserved names (RFC 6761) answer "not found" without a query; any other name is a mistake.
const reserved = /\.(invalid|test|example|localhost)\.?$/i;

function refuse(host: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${host}`);
  error.code = "ENOTFOUND";
  error.syscall = "getaddrinfo";
  (error as { hostname?: string }).hostname = host;
  return error;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: unknown, family?: number) => void;
const realLookup = dns.lookup;

function guardedLookup(host: string, ...rest: unknown[]): void {
  const callback = rest.at(-1) as LookupCallback;
  const options = rest.length > 1 ? rest[0] : undefined;
  const name = bare(host);
  if (name === "localhost" || net.isIP(name)) {
    (realLookup as (...args: unknown[]) => void)(host, ...(options === undefined ? [] : [options]), callback);
    return;
  }
  if (!reserved.test(name)) attempts.push(`resolve ${name}`);
  process.nextTick(() => callback(refuse(name), undefined));
}

function checkedAddress(address: unknown, where: string): string | undefined {
  const list = Array.isArray(address) ? address : [{ address }];
  for (const entry of list as { address?: unknown }[]) {
    const value = typeof entry === "string" ? entry : String(entry.address ?? "");
    if (!isLoopbackAddress(value)) return `${where} ${value}`;
  }
  return undefined;
}

dns.lookup = guardedLookup as unknown as typeof dns.lookup;
dns.promises.lookup = ((host: string, options?: unknown) =>
  new Promise<unknown>((resolve, reject) => {
    const done: LookupCallback = (error, address, family) =>
      error ? reject(error) : resolve(Array.isArray(address) ? address : { address, family });
    guardedLookup(host, options ?? {}, done);
  })) as typeof dns.promises.lookup;
syncBuiltinESMExports();

const realConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function connect(this: net.Socket, ...args: unknown[]) {
  // net.connect() hands the socket its normalized [options, callback] pair.
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  const options: { host?: string; path?: string; lookup?: unknown } =
    typeof first === "object" && first !== null
      ? (first as object)
      : typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))
        ? { host: typeof args[1] === "string" ? args[1] : undefined }
        : { path: String(first) };
  if (options.path === undefined) {
    const host = bare(options.host ?? "localhost");
    if (net.isIP(host) && !isLoopbackAddress(host)) {
      attempts.push(`connect ${host}`);
      process.nextTick(() =>
        this.destroy(Object.assign(new Error(`network guard: connect ${host}`), { code: "ECONNREFUSED" })),
      );
      return this;
    }
    if (typeof options.lookup === "function") {
      // A caller's own resolver (e.g. address pinning): whatever it answers must be loopback.
      const lookup = options.lookup as (host: string, opts: unknown, cb: LookupCallback) => void;
      (first as { lookup: unknown }).lookup = (name: string, opts: unknown, cb: LookupCallback) =>
        lookup(name, opts, (error, address, family) => {
          const bad = error ? undefined : checkedAddress(address, `connect ${name} ->`);
          if (bad) {
            attempts.push(bad);
            cb(Object.assign(new Error(`network guard: ${bad}`), { code: "ECONNREFUSED" }), undefined);
          } else cb(error, address, family);
        });
    }
  }
  return (realConnect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;

afterEach(() => {
  const seen = attempts.splice(0);
  expect(seen, "a test tried to reach beyond loopback").toEqual([]);
});
