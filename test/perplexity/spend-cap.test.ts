/**
 * The spend cap on Perplexity's Agent API: the running estimate (the searches its usage
 * counts, then the streamed text) crosses the cap mid-stream, Sonde POSTs the cancel once,
 * and the job ends `incomplete` with a `cost-cap` gap, the partial report and its cost.
 */
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import { collect, fastRetry, fixtureText, sseEvents } from "./helpers.js";

const BASE = "https://perplexity.test";
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: "error" }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const sample = sseEvents(fixtureText("perplexity", "agent-sample.sse"));
const RID = "resp_d60f3e03-57e0-4048-994f-69b29a6d2ce7";
const errors = JSON.parse(fixtureText("perplexity", "agent-errors.json")) as Record<
  string,
  { status: number; body: unknown }
>;
const cancelled = (
  JSON.parse(fixtureText("perplexity", "agent-cancelled.json")) as { body: Record<string, unknown> }
).body;

it("crossing the cap mid-stream POSTs one cancel and ends incomplete with the partial report", async () => {
  const running = sample.filter((event) => event.type !== "response.completed");
  const encoder = new TextEncoder();
  let close = () => {};
  const paths: string[] = [];
  server.use(
    http.all(`${BASE}/*`, ({ request }) => {
      const path = `${request.method} ${new URL(request.url).pathname}`;
      paths.push(path);
      if (path === "POST /v1/agent") {
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            for (const event of running)
              controller.enqueue(encoder.encode(`data: ${JSON.stringify(event)}\n\n`));
            // The run goes on (and bills) until it is cancelled.
            close = () => {
              try {
                controller.close();
              } catch {
                // The client already disconnected.
              }
            };
          },
        });
        return new HttpResponse(stream, { headers: { "content-type": "text/event-stream" } });
      }
      if (path === `POST /v1/agent/${RID}/cancel`) {
        setTimeout(close, 1);
        return HttpResponse.json(errors.cancelAck!.body as never, { status: errors.cancelAck!.status });
      }
      if (path === `GET /v1/agent/${RID}`) return HttpResponse.json({ ...cancelled, id: RID } as never);
      return HttpResponse.json({ error: "unscripted" }, { status: 500 });
    }),
  );
  const client = new Sonde({
    perplexity: { apiKey: "pplx-test-0123456789abcdef", baseURL: BASE, cancelWaitMs: 2_000 },
    retry: fastRetry,
    env: {},
  });
  // Catalog estimate: one search at $2.50 per 1,000 and a sentence of thoughts at $0.5 per M
  // output tokens come to ~$0.002503; the first report delta takes the job past the cap.
  const cap = 0.002505;
  const job = client.research.start({ model: "perplexity:medium", query: "q", budget: { maxCostUSD: cap } });
  const events = await collect(job);
  expect(paths.filter((p) => p.endsWith("/cancel"))).toHaveLength(1);
  expect(paths.filter((p) => p === "POST /v1/agent")).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
  const result = await job.result();
  expect(result.gaps).toEqual([
    { kind: "cost-cap", detail: expect.stringMatching(/cancelled the job server-side/) },
  ]);
  expect(result.report).toBe("Builder is $20/month flat ");
  expect(result.usage.costUSD).toBeGreaterThanOrEqual(cap);
});
