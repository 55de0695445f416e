import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressRefusal } from "../../../providers/portable/fetch/address.js";
import {
  defaultFetcher,
  type Fetcher,
  type PageRequest,
  type PageTransport,
} from "../../../providers/portable/index.js";
import { type Loopback, startLoopback } from "../../helpers/loopback.js";
import { guardConnections, tableLookup } from "./guard.js";

const guard = guardConnections();
let server: Loopback;
let port: number;
const ARTICLE = `<html><head><title>Bridge count</title></head><body><article><p>${"The automatic counter on the river bridge recorded an average of 1,250 bicycle commuters per weekday. ".repeat(4)}</p></article></body></html>`;

beforeAll(async () => {
  server = await startLoopback((request, response) => {
    const url = new URL(request.url, "http://x");
    if (url.pathname === "/robots.txt") return void response.writeHead(404).end();
    if (url.pathname === "/to")
      return void response.writeHead(302, { location: url.searchParams.get("u")! }).end();
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
  });
  port = Number(new URL(server.url).port);
});
afterAll(() => server.close());

const signal = () => new AbortController().signal;
const failure = (fetcher: Fetcher, url: string) =>
  fetcher.fetch(url, { signal: signal() }).then(
    () => {
      throw new Error(`${url} was fetched`);
    },
    (error: Error) => error,
  );

/** The test server's own name, allowed explicitly; everything else is resolved by the table. */
const SERVER = "sonde-test.internal";

describe("default fetcher: no fetches into private networks", () => {
  it("reads the loopback test server only because its name is allowed, and the guard sees that connection", async () => {
    const { lookup } = tableLookup({ [SERVER]: ["127.0.0.1"] });
    const page = await defaultFetcher({ allowHosts: [SERVER], lookup }).fetch(
      `http://${SERVER}:${port}/page`,
      {
        signal: signal(),
      },
    );
    expect(page.text).toContain("1,250 bicycle commuters per weekday");
    // The recorder is live: it saw the one address the fetcher was allowed to reach.
    expect(guard.attempts).toEqual(["127.0.0.1", "127.0.0.1"]); // robots.txt, then the page
  });

  it("refuses loopback and local names without the explicit option, before connecting", async () => {
    const { lookup } = tableLookup({ localhost: ["127.0.0.1"], [SERVER]: ["127.0.0.1"] });
    const fetcher = defaultFetcher({ lookup });
    for (const url of [
      `http://127.0.0.1:${port}/page`,
      `http://localhost:${port}/`,
      `http://${SERVER}:${port}/`,
    ]) {
      const error = await failure(fetcher, url);
      expect(error.name).toBe("FetchRefused");
      expect(error.message).toContain(`refused ${url}`);
      expect(error.message).toMatch(/loopback address.*allowHosts/);
    }
    expect(guard.attempts).toEqual([]);
  });

  const redirects: [target: string, reason: RegExp][] = [
    ["http://127.0.0.2:{port}/page", /127\.0\.0\.2 is a loopback address/],
    [
      "http://169.254.169.254/latest/meta-data/iam/",
      /169\.254\.169\.254 is a cloud instance-metadata address/,
    ],
    ["http://10.0.0.1/admin", /10\.0\.0\.1 is a private-network address/],
    ["http://[::1]:{port}/page", /::1 is a loopback address/],
    ["http://[::ffff:127.0.0.1]:{port}/page", /embeds 127\.0\.0\.1: 127\.0\.0\.1 is a loopback address/],
    ["http://[::ffff:a9fe:a9fe]/latest/", /embeds 169\.254\.169\.254/],
    ["http://[fd00:ec2::254]/latest/", /fd00:ec2::254 is a cloud instance-metadata address/],
    ["http://[fc00::5]/", /unique-local IPv6 address/],
    ["http://[fe80::1]/", /link-local address/],
    ["http://[64:ff9b::a00:1]/", /embeds 10\.0\.0\.1/],
    ["http://100.64.0.1/", /carrier-grade NAT/],
    ["http://0.0.0.0:{port}/", /unspecified address/],
    ["http://2130706433:{port}/", /127\.0\.0\.1 is a loopback address/], // 127.0.0.1 written as a number
    ["http://metadata.test/computeMetadata/v1/", /metadata\.test resolves to 169\.254\.169\.254/],
    ["http://intranet.test/wiki", /intranet\.test resolves to 10\.1\.2\.3 is a private-network address/],
    ["http://v6.test/", /v6\.test resolves to fd12:3456::1 is a unique-local/],
    ["http://mixed.test/", /mixed\.test resolves to 192\.168\.1\.1/],
    ["http://flip.test/", /flip\.test resolves to 10\.9\.9\.9/],
    ["http://sub.localhost/", /sub\.localhost resolves to 127\.0\.0\.1/],
    ["file:///etc/passwd", /only http and https/],
  ];

  it("checks every redirect hop: each private target is refused with its URL and reason, before any connection", async () => {
    const { lookup, calls } = tableLookup({
      [SERVER]: ["127.0.0.1"],
      "metadata.test": ["169.254.169.254"],
      "intranet.test": ["10.1.2.3"],
      "v6.test": ["fd12:3456::1"],
      "mixed.test": ["93.184.215.14", "192.168.1.1"],
      // Private at the check; public later. It is refused, and never asked again.
      "flip.test": (n) => (n === 0 ? ["10.9.9.9"] : ["93.184.215.14"]),
      "sub.localhost": ["127.0.0.1"],
    });
    const fetcher = defaultFetcher({ allowHosts: [SERVER], lookup, robots: false });
    for (const [template, reason] of redirects) {
      const target = template.replace("{port}", String(port));
      const start = `http://${SERVER}:${port}/to?u=${encodeURIComponent(target)}`;
      guard.attempts.length = 0;
      const error = await failure(fetcher, start);
      expect(error.name, target).toBe("FetchRefused");
      expect(error.message).toContain(`(redirected from ${start})`);
      expect(error.message).toMatch(reason);
      // Only the first hop, to the test server, ever reached a socket.
      expect(guard.attempts, target).toEqual(["127.0.0.1"]);
    }
    expect(calls.filter((h) => h === "flip.test")).toHaveLength(1);
  });

  it("connects to the address it checked: a host that changes its answer afterwards is not asked again", async () => {
    // Allowed by name (so its first answer passes); it would answer the metadata address next.
    const { lookup, calls } = tableLookup({
      "rebind.test": (n) => (n === 0 ? ["127.0.0.1"] : ["169.254.169.254"]),
    });
    const fetcher = defaultFetcher({ allowHosts: ["rebind.test"], lookup, robots: false });
    const page = await fetcher.fetch(`http://rebind.test:${port}/page`, { signal: signal() });
    expect(page.text).toContain("1,250 bicycle commuters");
    expect(calls).toEqual(["rebind.test"]);
    expect(guard.attempts).toEqual(["127.0.0.1"]);
  });
});

describe("default fetcher without a resolver (lookup: false, as on runtimes without Node sockets)", () => {
  it("still refuses IP literals and localhost names, and hands host names to the transport unresolved", async () => {
    const sent: PageRequest[] = [];
    const transport: PageTransport = async (request) => {
      sent.push(request);
      return new Response(ARTICLE, { headers: { "content-type": "text/html" } });
    };
    const fetcher = defaultFetcher({ lookup: false, transport, robots: false });
    for (const url of [
      "http://localhost/",
      "http://app.localhost/",
      "http://10.0.0.1/",
      "http://[fd00:ec2::254]/",
    ])
      expect((await failure(fetcher, url)).name, url).toBe("FetchRefused");
    expect(sent).toEqual([]);
    const page = await fetcher.fetch("https://news.example.org/bridge", { signal: signal() });
    expect(page.text).toContain("1,250 bicycle commuters");
    expect(sent.map((r) => [r.url.href, r.address])).toEqual([
      ["https://news.example.org/bridge", undefined],
    ]);
    expect(guard.attempts).toEqual([]);
  });
});

describe("address classification", () => {
  it("allows public unicast addresses, IPv4 and IPv6, also through NAT64 and 6to4", () => {
    for (const address of [
      "93.184.215.14",
      "8.8.8.8",
      "2606:4700:4700::1111",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ])
      expect(addressRefusal(address), address).toBeUndefined();
  });

  it("refuses every special-purpose range", () => {
    for (const address of [
      "127.0.0.1",
      "10.255.0.1",
      "172.16.5.4",
      "192.168.0.1",
      "169.254.1.1",
      "100.127.255.255",
      "0.0.0.0",
      "255.255.255.255",
      "224.0.0.1",
      "192.0.2.1",
      "198.18.0.1",
      "240.0.0.1",
      "::",
      "::1",
      "fe80::1",
      "fc00::1",
      "fd00:ec2::254",
      "ff02::1",
      "::ffff:10.0.0.1",
      "2002:a00:1::1",
      "2001:db8::1",
      "2001::1",
    ])
      expect(addressRefusal(address), address).toBeDefined();
  });
});
