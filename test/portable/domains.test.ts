import { describe, expect, it } from "vitest";
import { domainFilter } from "../../providers/portable/domains.js";

describe("allowDomains / denyDomains", () => {
  it("a domain covers itself and its subdomains, never a look-alike that merely ends with the same letters", () => {
    const allow = domainFilter(["example.org"]);
    expect(allow.excluded("https://example.org/a")).toBeUndefined();
    expect(allow.excluded("https://stats.example.org/a")).toBeUndefined();
    expect(allow.excluded("https://www.example.org/a")).toBeUndefined();
    expect(allow.excluded("https://badexample.org/a")).toBe(
      "its domain is not in allowDomains (example.org)",
    );
    expect(allow.excluded("https://example.org.evil.test/a")).toBe(
      "its domain is not in allowDomains (example.org)",
    );

    const deny = domainFilter([], ["example.org"]);
    expect(deny.excluded("https://news.example.org/a")).toBe(
      "its domain is denied (denyDomains: example.org)",
    );
    expect(deny.excluded("https://notexample.org/a")).toBeUndefined();
  });

  it("deny wins over allow, however the domains are written", () => {
    const filter = domainFilter(["https://www.Example.org/", "*.example.com"], ["blocked.example.org."]);
    expect(filter.excluded("https://blocked.example.org/x")).toBe(
      "its domain is denied (denyDomains: blocked.example.org)",
    );
    expect(filter.excluded("https://deep.blocked.example.org/x")).toBe(
      "its domain is denied (denyDomains: blocked.example.org)",
    );
    expect(filter.excluded("https://open.example.org/x")).toBeUndefined();
    expect(filter.excluded("https://a.example.com/x")).toBeUndefined();
    expect(filter.excluded("not a url")).toBe("it is not a valid URL");
  });
});
