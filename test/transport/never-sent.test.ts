/**
 * A job-creating request that provably never left (connection refused, host name not
 * resolved, TLS handshake refused) is a retryable `ConnectionError` and is sent again under
 * the retry policy; one that may have been received stays `IndeterminateSubmissionError`.
 * Every case runs over loopback and counts what the server received.
 */
import { readFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { ConnectionError, IndeterminateSubmissionError, Sonde, type SondeOptions } from "../../src/index.js";

const KEY = "sk-test-never-sent-0123456789";
const completed = readFileSync(
  new URL("../fixtures/openai/poll/pro.completed.json", import.meta.url),
  "utf8",
);
const tls = new URL("../fixtures/tls/", import.meta.url);

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
  servers = [];
});

/** A server that counts the requests it received; `answer` decides what each one gets. */
function counting(server: Server, answer: "completed" | "cut" = "completed") {
  const received: string[] = [];
  server.on("request", (req, res) => {
    received.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => {
      if (answer === "cut") return res.socket?.destroy();
      res.writeHead(200, { "content-type": "application/json" }).end(completed);
    });
  });
  servers.push(server);
  return received;
}

const listen = (server: Server, port = 0) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const probe = createHttpServer();
  const port = await listen(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function start(baseURL: string, options: Partial<SondeOptions> = {}) {
  const client = new Sonde({
    openai: { apiKey: KEY, baseURL },
    retry: { attempts: 3, minDelayMs: 5, maxDelayMs: 20 },
    env: {},
    ...options,
  });
  return client.research.start({ model: "openai:gpt-5.5-pro", query: "q" });
}

describe("a job submission that never left", () => {
  it("a refused connection is a retryable ConnectionError, not a possibly billed job", async () => {
    const port = await closedPort();
    let attempts = 0;
    const job = start(`http://127.0.0.1:${port}/v1`, {
      fetch: (input, init) => {
        attempts++;
        return globalThis.fetch(input, init);
      },
    });
    const error = await job.result().catch((e: unknown) => e);
    expect(ConnectionError.isInstance(error)).toBe(true);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(false);
    expect(error).toMatchObject({ retryable: true, networkCode: "ECONNREFUSED", code: "connection_failed" });
    expect((error as Error).message).toMatch(
      /could not connect \(ECONNREFUSED\); the request was never sent/,
    );
    expect((error as Error).message).not.toContain(KEY);
    expect(attempts).toBe(4); // the first try and three retries, with backoff
  });

  it("a port fetch blocks (the spec's bad ports, e.g. 9) is a ConnectionError saying so, not resent", async () => {
    let attempts = 0;
    const job = start("http://127.0.0.1:9/v1", {
      fetch: (input, init) => {
        attempts++;
        return globalThis.fetch(input, init);
      },
    });
    const error = await job.result().catch((e: unknown) => e);
    expect(ConnectionError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ retryable: false, networkCode: "BAD_PORT", provider: "openai" });
    expect((error as Error).message).toMatch(
      /fetch blocks this port \(BAD_PORT\); the request was never sent\. Use another port\./,
    );
    expect(attempts).toBe(1); // the same port is blocked again: no retry
  });

  it.each([
    ["gemini", "gemini:deep-research-preview-04-2026"],
    ["openrouter", "openrouter:perplexity/sonar-deep-research"],
    ["hosted", "hosted:agents.deep_research"],
    ["perplexity", "perplexity:medium"],
  ] as const)("%s: a refused submission is a ConnectionError too", async (engine, model) => {
    const port = await closedPort();
    const client = new Sonde({
      [engine]: { apiKey: KEY, baseURL: `http://127.0.0.1:${port}/v1` },
      retry: { attempts: 1, minDelayMs: 5, maxDelayMs: 10 },
      env: {},
    });
    const error = await client.research
      .start({ model, query: "q" })
      .result()
      .catch((e: unknown) => e);
    expect(ConnectionError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({ provider: engine, networkCode: "ECONNREFUSED" });
  });

  it("after refusals the POST is retried, and the server receives it exactly once", async () => {
    const port = await closedPort();
    const server = createHttpServer();
    const received = counting(server);
    let attempts = 0;
    const job = start(`http://127.0.0.1:${port}/v1`, {
      fetch: async (input, init) => {
        attempts++;
        try {
          return await globalThis.fetch(input, init);
        } catch (error) {
          // The engine comes up after the first refusal.
          if (!server.listening) await listen(server, port);
          throw error;
        }
      },
    });
    const result = await job.result();
    expect(result.status).toBe("completed");
    expect(attempts).toBe(2);
    expect(received).toEqual(["POST /v1/responses"]);
  });

  it.each(["ENOTFOUND", "EAI_AGAIN"])(
    "a host name that does not resolve (%s) is retried; one POST arrives once it resolves",
    async (code) => {
      const server = createHttpServer();
      const received = counting(server);
      const port = await listen(server);
      let lookups = 0;
      // An injected resolver: the name is never looked up anywhere, first failing, then loopback.
      const dispatcher = new Agent({
        connect: {
          lookup: (hostname, _options, callback) => {
            if (lookups++ === 0)
              return callback(Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code }), "", 4);
            return callback(null, [{ address: "127.0.0.1", family: 4 }] as never, 4);
          },
        },
      });
      const job = start(`http://api.openai.invalid:${port}/v1`, {
        // the HTTP client hands fetch a Request of Node's own undici; rebuild it for the injected dispatcher.
        fetch: (async (input: Request) =>
          undiciFetch(input.url, {
            method: input.method,
            headers: [...input.headers],
            body: await input.text(),
            signal: input.signal,
            dispatcher,
          })) as unknown as typeof fetch,
      });
      try {
        const result = await job.result();
        expect(result.status).toBe("completed");
        expect(lookups).toBe(2);
        expect(received).toEqual(["POST /v1/responses"]);
      } finally {
        await dispatcher.close();
      }
    },
  );

  it("a TLS handshake that fails (plain HTTP behind https) sends nothing and is a ConnectionError", async () => {
    const server = createHttpServer();
    const received = counting(server);
    const port = await listen(server);
    const error = await start(`https://127.0.0.1:${port}/v1`, { retry: { attempts: 1, minDelayMs: 5 } })
      .result()
      .catch((e: unknown) => e);
    expect(ConnectionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/the TLS handshake failed/);
    expect(received).toEqual([]);
  });

  it("a TLS certificate the client rejects sends nothing and is a ConnectionError", async () => {
    const server = createHttpsServer({
      key: readFileSync(new URL("self-signed.key", tls)),
      cert: readFileSync(new URL("self-signed.crt", tls)),
    });
    const received = counting(server);
    const port = await listen(server);
    const error = await start(`https://127.0.0.1:${port}/v1`, { retry: { attempts: 1, minDelayMs: 5 } })
      .result()
      .catch((e: unknown) => e);
    expect(ConnectionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ networkCode: "DEPTH_ZERO_SELF_SIGNED_CERT", retryable: true });
    expect(received).toEqual([]);
  });

  it("a connection cut after the request arrived stays indeterminate and is not resent", async () => {
    const server = createHttpServer();
    const received = counting(server, "cut");
    const port = await listen(server);
    const error = await start(`http://127.0.0.1:${port}/v1`)
      .result()
      .catch((e: unknown) => e);
    expect(IndeterminateSubmissionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: false });
    expect(received).toEqual(["POST /v1/responses"]);
  });
});
