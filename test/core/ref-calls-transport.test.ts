/**
 * `research.get(ref)` and `research.cancel(ref)` are one-shot calls outside a job's stream:
 * a transport failure there is still a typed SondeError (a refused connection is a
 * `ConnectionError` naming its code), never fetch's bare `TypeError: fetch failed`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConnectionError, type JobRef, Sonde, SondeError } from "../../src/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";

const KEY = "sk-test-refcalls-0123456789abcdef";
let resetting: Loopback;
let refusedURL: string;
beforeAll(async () => {
  // Answers nothing: every connection is torn down once the request arrived.
  resetting = await startLoopback((_request, response) => {
    response.socket?.destroy();
  });
  const closed = await startLoopback(() => {});
  refusedURL = closed.url;
  await closed.close();
});
afterAll(() => resetting?.close());

const clientAt = (baseURL: string) =>
  new Sonde({ env: {}, openai: { apiKey: KEY, baseURL: `${baseURL}/v1` }, retry: { attempts: 0 } });
const ref: JobRef = {
  v: 1,
  provider: "openai",
  model: "openai:gpt-5.5-pro",
  jobId: "resp_68d1c0ffee00112233445566778899aa",
  createdAt: "2026-12-01T10:00:00.000Z",
  resume: {},
};

describe("get and cancel of a ref over a failing connection", () => {
  it.each(["get", "cancel"] as const)("%s: a refused connection is a ConnectionError", async (call) => {
    const client = clientAt(refusedURL);
    const error = await client.research[call](ref).catch((e: unknown) => e);
    expect(ConnectionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: "connection_failed",
      networkCode: "ECONNREFUSED",
      provider: "openai",
    });
  });

  it.each(["get", "cancel"] as const)(
    "%s: a reset after sending is a typed, keyless SondeError",
    async (call) => {
      const client = clientAt(resetting.url);
      const error = await client.research[call](ref).catch((e: unknown) => e);
      expect(SondeError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ provider: "openai" });
      expect(JSON.stringify(error) + String((error as Error).message)).not.toContain(KEY);
    },
  );
});

describe("attach over a refused connection", () => {
  const streamed: JobRef = {
    v: 1,
    provider: "perplexity",
    model: "perplexity:medium",
    jobId: "resp_0f3c1d5e8a444c1e9d0b2b6f",
    createdAt: "2026-12-01T10:00:00.000Z",
    resume: {},
  };
  it.each([
    ["polled", ref],
    ["streamed", streamed],
  ] as const)("%s: is a ConnectionError naming its code, not a lost stream", async (_kind, jobRef) => {
    const client = new Sonde({
      env: {},
      openai: { apiKey: KEY, baseURL: `${refusedURL}/v1` },
      perplexity: { apiKey: KEY, baseURL: refusedURL },
      retry: { attempts: 0 },
    });
    const job = client.research.attach(jobRef);
    const events: { type: string; error?: { code: string } }[] = [];
    for await (const event of job) events.push(event as (typeof events)[number]);
    const error = await job.result().catch((e: unknown) => e);
    expect(ConnectionError.isInstance(error), String(error)).toBe(true);
    expect(error).toMatchObject({
      code: "connection_failed",
      networkCode: "ECONNREFUSED",
      provider: jobRef.provider,
    });
    expect((error as Error).message).toMatch(
      /could not connect \(ECONNREFUSED\); the request was never sent/,
    );
    expect(events.filter((e) => e.type === "error").map((e) => e.error?.code)).toEqual(["connection_failed"]);
    // The job itself may still be running: the ref stays worth attaching again.
    expect(job.status).toBe("incomplete");
  });
});
