/** robots.txt, the per-host limit, the user agent and the caps of the default fetcher. */
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DefaultFetcherOptions, defaultFetcher, USER_AGENT } from "../../../providers/portable/index.js";
import { InvalidRequestError } from "../../../src/index.js";
import { type Loopback, startLoopback } from "../../helpers/loopback.js";
import { guardConnections } from "./guard.js";

guardConnections();
const ARTICLE = `<html><head><title>Count</title></head><body><p>${"The counter recorded 1,250 bicycle commuters per weekday in 2024. ".repeat(6)}</p></body></html>`;

let server: Loopback;
let robots: { status: number; body: string } = { status: 404, body: "" };
let inFlight = 0;
let maxInFlight = 0;
const held: (() => void)[] = [];

beforeAll(async () => {
  server = await startLoopback(async (request, response: ServerResponse) => {
    const path = request.url;
    if (path === "/robots.txt") return void response.writeHead(robots.status).end(robots.body);
    if (path === "/loop") return void response.writeHead(302, { location: "/loop" }).end();
    if (path === "/image")
      return void response.writeHead(200, { "content-type": "image/png" }).end(Buffer.alloc(64));
    if (path === "/big")
      return void response.writeHead(200, { "content-type": "text/plain" }).end("word ".repeat(200_000));
    if (path === "/silent") return; // never answers
    if (path.startsWith("/slow")) {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise<void>((resolve) => held.push(resolve));
      inFlight--;
    }
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
  });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  robots = { status: 404, body: "" };
});

const fetcher = (options: DefaultFetcherOptions = {}) =>
  defaultFetcher({ allowHosts: ["127.0.0.1"], ...options });
const signal = () => new AbortController().signal;
const paths = () => server.requests.map((r) => r.url);

describe("default fetcher: robots.txt and politeness", () => {
  it("honours robots.txt for its user agent, reads it once per site, and names the project in its user agent", async () => {
    robots = {
      status: 200,
      body: "User-agent: *\nDisallow:\n\nUser-agent: sonde-portable\nDisallow: /private\n",
    };
    const f = fetcher();
    await expect(f.fetch(`${server.url}/private/notes`, { signal: signal() })).rejects.toThrow(
      `not fetched ${server.url}/private/notes: ${server.url}/robots.txt disallows it for sonde-portable`,
    );
    const page = await f.fetch(`${server.url}/public`, { signal: signal() });
    expect(page.text).toContain("1,250 bicycle commuters");
    expect(paths()).toEqual(["/robots.txt", "/public"]);
    expect(USER_AGENT).toMatch(/^sonde-portable\/[\d.]+ \(\+https:\/\/\S+\)$/);
    for (const request of server.requests) expect(request.headers["user-agent"]).toBe(USER_AGENT);
  });

  it("treats a missing robots.txt as allowing everything, and a failing one as disallowing for now", async () => {
    await fetcher().fetch(`${server.url}/a`, { signal: signal() });
    robots = { status: 503, body: "" };
    await expect(fetcher().fetch(`${server.url}/a`, { signal: signal() })).rejects.toThrow(
      `${server.url}/robots.txt answered HTTP 503, so the site is treated as disallowed for now`,
    );
  });

  it("keeps at most perHostConcurrency requests in flight per host", async () => {
    maxInFlight = 0;
    const f = fetcher({ perHostConcurrency: 2, robots: false });
    const all = Promise.all(
      [1, 2, 3, 4, 5].map((n) => f.fetch(`${server.url}/slow/${n}`, { signal: signal() })),
    );
    // Each time two are held (or all that are left), give a third the chance to sneak in, then release one.
    const tick = () => new Promise((resolve) => setTimeout(resolve, 10));
    for (let served = 0; served < 5; served++) {
      while (held.length < Math.min(2, 5 - served)) await tick();
      await tick();
      held.shift()!();
    }
    expect((await all).map((p) => p.text.includes("1,250 bicycle commuters"))).toEqual(Array(5).fill(true));
    expect(maxInFlight).toBe(2);
  });
});

describe("default fetcher: caps", () => {
  it("stops after maxRedirects", async () => {
    await expect(
      fetcher({ robots: false, maxRedirects: 3 }).fetch(`${server.url}/loop`, { signal: signal() }),
    ).rejects.toThrow(`more than 3 redirects (the last to ${server.url}/loop)`);
    expect(paths()).toHaveLength(4);
  });

  it("refuses content types it cannot read, and cuts text at maxBytes", async () => {
    await expect(
      fetcher({ robots: false }).fetch(`${server.url}/image`, { signal: signal() }),
    ).rejects.toThrow('unsupported content type "image/png"');
    const page = await fetcher({ robots: false, maxBytes: 1000 }).fetch(`${server.url}/big`, {
      signal: signal(),
    });
    expect(page.text.length).toBe(1000);
  });

  it("gives up after timeoutMs", async () => {
    await expect(
      fetcher({ robots: false, timeoutMs: 300 }).fetch(`${server.url}/silent`, { signal: signal() }),
    ).rejects.toThrow("no complete answer within 0.3 s");
  });
});

describe("default fetcher: options", () => {
  it("rejects unusable options when it is made, with a typed error that says what to pass", () => {
    const error = (options: unknown) => {
      try {
        defaultFetcher(options as DefaultFetcherOptions);
      } catch (e) {
        return e;
      }
      throw new Error("accepted");
    };
    const hosts = error({ allowHosts: "wiki.corp" });
    expect(InvalidRequestError.isInstance(hosts)).toBe(true);
    expect((hosts as Error).message).toMatch(/^defaultFetcher: allowHosts must be an array of host names/);
    expect((error({ maxBytes: 0 }) as Error).message).toBe(
      "defaultFetcher: maxBytes must be an integer of at least 1; got 0.",
    );
    expect((error({ perHostConcurrency: 1.5 }) as Error).message).toMatch(
      /perHostConcurrency must be an integer/,
    );
    expect((error({ lookup: "8.8.8.8" }) as Error).message).toMatch(/lookup must be a function/);
  });
});
