/**
 * The spend cap on the portable engine: the chat endpoint reports what each call cost
 * (`usage.cost`, as OpenRouter's does), the job's usage carries the running charge, and
 * crossing the cap stores the cancellation once, stops local work (no further model
 * calls), and ends the job `incomplete` with a `cost-cap` gap and the charge so far.
 */
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { demoAnswer } from "../../providers/portable/demo/model.js";
import { createMemoryStore, type JobStore } from "../../providers/portable/index.js";
import {
  CHAT_URL,
  collect,
  fixtureJson,
  MODEL,
  portableClient,
  scriptedFetcher,
  scriptedSearch,
} from "./helpers.js";

const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const QUERY = "How many bicycle commuters crossed the river bridge in 2024?";
const PER_CALL_USD = 0.01;

/** The demo model's answers, each priced by the endpoint the way OpenRouter prices it. */
function pricedChat() {
  const template = fixtureJson<Record<string, unknown>>("chat-completion.json");
  let calls = 0;
  const handler = http.post(`${CHAT_URL}/chat/completions`, async ({ request }) => {
    calls++;
    const body = (await request.json()) as { messages: never };
    const response = structuredClone(template) as {
      choices: { message: { content: string } }[];
      usage: Record<string, unknown>;
    };
    response.choices[0]!.message.content = demoAnswer(body.messages);
    response.usage.cost = PER_CALL_USD;
    return HttpResponse.json(response as never);
  });
  return { handler, calls: () => calls };
}

it("crossing the cap stores one cancellation, stops the loop and keeps what it has", async () => {
  const inner = createMemoryStore();
  let intents = 0;
  const store: JobStore = {
    ...inner,
    id: inner.id,
    async putJob(record) {
      const before = record.jobId ? await inner.getJob(record.jobId) : undefined;
      if (record.cancelRequestedAt && !before?.cancelRequestedAt) intents++;
      await inner.putJob(record);
    },
  };
  const chat = pricedChat();
  server.use(chat.handler);
  const client = portableClient({
    search: scriptedSearch().backend,
    fetcher: scriptedFetcher().fetcher,
    store,
  });
  const uncapped = await client.research.start({ model: MODEL, query: QUERY }).result();
  const uncappedCalls = chat.calls();
  expect(uncapped.usage).toMatchObject({ costSource: "provider" });
  expect(uncappedCalls).toBeGreaterThan(3);

  const cap = 2.5 * PER_CALL_USD;
  const job = client.research.start({ model: MODEL, query: QUERY, budget: { maxCostUSD: cap } });
  const events = await collect(job);
  const result = await job.result();
  expect(intents).toBe(1);
  expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  expect(result.gaps.filter((gap) => gap.kind === "cost-cap")).toEqual([
    {
      kind: "cost-cap",
      detail: expect.stringMatching(/as the provider charged it.*cancelled the job server-side/),
    },
  ]);
  // The third call ($0.03) crossed the cap: the loop made fewer calls than the uncapped job.
  expect(chat.calls() - uncappedCalls).toBeLessThan(uncappedCalls);
  expect(result.usage.costUSD).toBeGreaterThanOrEqual(cap);
  expect(result.usage.costSource).toBe("provider");
});
