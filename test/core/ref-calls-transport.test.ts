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
