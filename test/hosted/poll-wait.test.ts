/**
 * No silent wait while polling: a running job's poll answered with a `Retry-After` longer than
 * `retry.maxDelayMs` (on a 429, or on a good answer) is waited out as the server asks (polling
 * bills nothing), and the logger hears it, with how long, before the wait.
 */
import type { ServerResponse } from "node:http";
import { afterEach, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { type Loopback, startLoopback } from "../helpers/loopback.js";
import { transcript } from "../perplexity/helpers.js";

const KEY = "hosted-key-0123456789abcdef";
let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const { exchanges } = transcript("hosted", "invoke-completed.json");
const [queued, running, completed] = exchanges.map((exchange) => exchange.response.body);

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

async function run(firstPoll: (response: ServerResponse) => void) {
  let polls = 0;
  server = await startLoopback((request, response) => {
    if (request.method === "POST") return json(response, 200, queued);
    if (++polls === 1) return firstPoll(response);
    return json(response, 200, completed);
  });
  const warned: { message: string; fields: unknown }[] = [];
  const sonde = new Sonde({
    hosted: { apiKey: KEY, baseURL: server.url },
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 50 },
    env: {},
    logger: { warn: (message, fields) => warned.push({ message, fields }) },
  });
  const started = performance.now();
  const result = await sonde.research.start({ model: "hosted:agents.deep_research", query: "q" }).result();
  return { result, warned, elapsedMs: performance.now() - started };
}

it("a 429 on a poll asking for longer than retry.maxDelayMs is waited out as asked, and said", async () => {
  const { result, warned, elapsedMs } = await run((response) =>
    json(response, 429, { error: { code: "rate_limited", message: "Slow down." } }, { "retry-after": "1" }),
  );
  expect(result.status).toBe("completed");
  expect(elapsedMs).toBeGreaterThanOrEqual(950);
  expect(warned).toEqual([
    {
      message: expect.stringMatching(/asks to wait longer than retry.maxDelayMs before the next poll/),
      fields: { provider: "hosted", waitMs: 1000 },
    },
  ]);
});

it("a good poll answer whose Retry-After is longer than retry.maxDelayMs: the next poll waits as asked, and it is said", async () => {
  const { result, warned, elapsedMs } = await run((response) =>
    json(response, 200, running, { "retry-after": "1" }),
  );
  expect(result.status).toBe("completed");
  expect(elapsedMs).toBeGreaterThanOrEqual(950);
  expect(warned).toEqual([
    {
      message: expect.stringMatching(/asks to wait longer than retry.maxDelayMs before the next poll/),
      fields: { provider: "hosted", waitMs: 1000 },
    },
  ]);
});
