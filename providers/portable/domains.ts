/** `allowDomains`/`denyDomains`: a domain matches itself and its subdomains; deny wins. */

function normalizeDomain(domain: string): string {
  return domain
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, "")
    .replace(/[/:?#].*$/, "")
    .replace(/^\*\./, "")
    .replace(/^www\./, "")
    .replace(/\.$/, "");
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname
      .toLowerCase()
      .replace(/^www\./, "")
      .replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

const matches = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

export interface DomainFilter {
  /** Why `url` is excluded, or undefined when it may be used as evidence. */
  excluded(url: string): string | undefined;
}

export function domainFilter(allow: string[] = [], deny: string[] = []): DomainFilter {
  const allowed = allow.map(normalizeDomain).filter(Boolean);
  const denied = deny.map(normalizeDomain).filter(Boolean);
  return {
    excluded(url) {
      const host = hostOf(url);
      if (!host) return "it is not a valid URL";
      const deniedBy = denied.find((d) => matches(host, d));
      if (deniedBy) return `its domain is denied (denyDomains: ${deniedBy})`;
      if (allowed.length && !allowed.some((d) => matches(host, d)))
        return `its domain is not in allowDomains (${allowed.join(", ")})`;
      return undefined;
    },
  };
}
