/**
 * One usage rule for every Chat Completions user (src/protocols/chat-completions/usage.ts,
 * sources in providers/openrouter/WIRE.md §4): OpenRouter's stream, OpenRouter's generation
 * endpoint and the portable engine's chat client split reasoning from the completion the
 * same way, whether the server counts reasoning inside `completion_tokens` (OpenAI) or
 * beside it (xAI, some OpenRouter upstreams). Before, OpenRouter always subtracted (a
 * beside-count report lost its text tokens) and the portable client only looked at the total.
 */
import { describe, expect, it } from "vitest";
import { openAICompatibleChat } from "../../providers/portable/chat.js";
import { Sonde } from "../../src/index.js";

interface Counts {
  prompt: number;
  completion: number;
  reasoning: number;
  total?: number;
}

/** Real figures: xAI grok-3-mini (vercel/ai#12425), an OpenRouter upstream without a total (MapleTechLabs/maple#824), OpenAI-style (the recorded fixture). */
const cases: { name: string; counts: Counts; output: number }[] = [
  {
    name: "beside, as the total says (xAI)",
    counts: { prompt: 12, completion: 1, reasoning: 386, total: 399 },
    output: 1,
  },
  {
    name: "beside, larger than the completion, no total",
    counts: { prompt: 40, completion: 293, reasoning: 321 },
    output: 293,
  },
  {
    name: "inside, as the total says (OpenAI)",
    counts: { prompt: 412, completion: 96, reasoning: 64, total: 508 },
    output: 32,
  },
  { name: "inside, no total", counts: { prompt: 21, completion: 1480, reasoning: 1210 }, output: 270 },
];

const usageBlock = ({ prompt, completion, reasoning, total }: Counts) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  ...(total !== undefined && { total_tokens: total }),
  completion_tokens_details: { reasoning_tokens: reasoning },
  cost: 0.01,
});

const json = (body: unknown) =>
  new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });

const chunk = (extra: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: "gen-usage-1", object: "chat.completion.chunk", ...extra })}\n\n`;

const streamBody = (counts: Counts) =>
  chunk({ choices: [{ index: 0, delta: { content: "Answer." }, finish_reason: null }] }) +
  chunk({
    choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }],
    usage: usageBlock(counts),
  }) +
  "data: [DONE]\n\n";

/** An OpenRouter client over a fake fetch: the stream for the POST, the generation record for GET /generation. */
function openrouter(counts: Counts) {
  const fetch = async (input: RequestInfo | URL) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.includes("/generation"))
      return new Response(streamBody(counts), { headers: { "content-type": "text/event-stream" } });
    return json({
      data: {
        id: "gen-usage-1",
        native_tokens_prompt: counts.prompt,
        native_tokens_completion: counts.completion,
        native_tokens_reasoning: counts.reasoning,
        total_cost: 0.01,
        finish_reason: "stop",
      },
    });
  };
  return new Sonde({
    openrouter: { apiKey: "sk-or-test", baseURL: "http://127.0.0.1:9/api/v1" },
    fetch,
    env: {},
  });
}

const MODEL = "openrouter:openai/o4-mini-deep-research";

/** OpenRouter's stream: one content chunk, then the usage chunk with the finish reason. */
async function viaOpenRouterStream(counts: Counts) {
  const result = await openrouter(counts).research.start({ model: MODEL, query: "q" }).result();
  return { output: result.usage.outputTokens, reasoning: result.usage.reasoningTokens };
}

/** OpenRouter's generation endpoint (research.get), which has no total. */
async function viaOpenRouterGeneration(counts: Counts) {
  const client = openrouter(counts);
  const job = client.research.start({ model: MODEL, query: "q" });
  await job.result();
  const snapshot = await client.research.get(job.toRef());
  return { output: snapshot.usage?.outputTokens, reasoning: snapshot.usage?.reasoningTokens };
}

/** The portable engine's chat client (non-streaming). */
async function viaPortableChat(counts: Counts) {
  const chat = openAICompatibleChat({
    name: "local",
    baseURL: "http://127.0.0.1:9/v1",
    fetch: async () =>
      json({ choices: [{ message: { content: "{}" }, finish_reason: "stop" }], usage: usageBlock(counts) }),
    clock: () => new Date(),
    retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 1 },
    flavor: "generic",
  });
  const response = await chat.complete({
    model: "m",
    messages: [{ role: "user", content: "q" }],
    maxTokens: 16,
    signal: new AbortController().signal,
  });
  return { output: response.outputTokens, reasoning: response.reasoningTokens };
}

describe("chat completions usage: reasoning inside or beside completion_tokens", () => {
  for (const { name, counts, output } of cases) {
    it(`${name}: every user counts ${output} output and ${counts.reasoning} reasoning tokens`, async () => {
      const expected = { output, reasoning: counts.reasoning };
      expect(await viaOpenRouterStream(counts)).toEqual(expected);
      expect(await viaPortableChat(counts)).toEqual(expected);
      // The generation endpoint has no total: it tells by the counts alone.
      if (counts.total === undefined) expect(await viaOpenRouterGeneration(counts)).toEqual(expected);
    });
  }

  it("a total that says 'inside' wins over a reasoning count larger than the completion (clamped, never negative)", async () => {
    const counts = { prompt: 10, completion: 5, reasoning: 8, total: 15 };
    expect(await viaOpenRouterStream(counts)).toEqual({ output: 0, reasoning: 8 });
    expect(await viaPortableChat(counts)).toEqual({ output: 0, reasoning: 8 });
  });
});
