/**
 * Which IP addresses the default fetcher may connect to: public unicast only. Loopback,
 * private, link-local (cloud metadata lives there), CGNAT, unique-local, multicast,
 * reserved and documentation ranges are refused, also when written as IPv4-mapped,
 * NAT64 or 6to4 IPv6 addresses, so a page or a model cannot steer the engine into the
 * network it runs in.
 */
import ipaddr from "ipaddr.js";

const described: Record<string, string> = {
  unspecified: "an unspecified address",
  broadcast: "a broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT (shared) address",
  private: "a private-network address",
  uniqueLocal: "a unique-local IPv6 address",
  deprecatedSiteLocal: "a site-local IPv6 address",
  teredo: "a Teredo tunnel address",
  rfc6145: "an IPv4-translated IPv6 address",
};

/** Addresses of instance-metadata services: named in the refusal because they hold credentials. */
const METADATA = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"]);

/** Why the fetcher must not connect to `address`, or `undefined` when it is public unicast. */
export function addressRefusal(address: string): string | undefined {
  const literal = address.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(literal)) return `"${address}" is not an IP address`;
  const ip = ipaddr.parse(literal);
  const shown = ip.toString();
  if (METADATA.has(shown)) return `${shown} is a cloud instance-metadata address`;
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    const embedded = embeddedIPv4(v6);
    if (embedded) {
      const inner = addressRefusal(embedded.toString());
      return inner && `${shown} embeds ${embedded.toString()}: ${inner}`;
    }
  }
  const range = ip.range();
  if (range === "unicast") return undefined;
  return `${shown} is ${described[range] ?? `a special-purpose address (${range})`}`;
}

/** The IPv4 address an IPv6 transition form reaches, if any (mapped, NAT64, 6to4). */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  const parts = ip.parts;
  const range = ip.range();
  if (range === "rfc6052") return ipaddr.fromByteArray(ip.toByteArray().slice(12)) as ipaddr.IPv4;
  if (range === "6to4")
    return new ipaddr.IPv4([parts[1]! >> 8, parts[1]! & 0xff, parts[2]! >> 8, parts[2]! & 0xff]);
  return undefined;
}

/** Whether `host` (a URL hostname, IPv6 in brackets) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ""));
}
