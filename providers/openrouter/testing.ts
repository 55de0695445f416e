/**
 * msw handlers that speak OpenRouter's streamed Chat Completions wire format
 * (WIRE.md §3–§7), for tests one level below `mockResearch`: keepalive
 * comments, reasoning deltas, a first content chunk carrying Perplexity-style
 * annotations (start = end = 0), the report in pieces with `[n]` markers left to
 * the caller, usage with the charge in the last chunk, then `data: [DONE]`.
 * `GET /generation` answers for generations this mock streamed.
 */
import type { HttpHandler } from "msw";
import { loadMsw } from "../../src/testing/msw/load.js";
import type { ProviderMockOptions } from "../../src/testing/provider-mock.js";
import { defaultBaseURL } from "./adapter.js";

const encoder = new TextEncoder();

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

export function handlers(options: ProviderMockOptions = {}): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  const base = (options.baseURL ?? defaultBaseURL).replace(/\/$/, "");
  const report = options.report ?? "Mock report.";
  const generations = new Map<string, { model: string; cost: number }>();
  let calls = 0;

  return [
    http.post(`${base}/chat/completions`, async ({ request }) => {
      if (options.fail)
        return HttpResponse.json(
          options.fail.body ?? { error: { code: options.fail.status, message: "Mock failure" } },
          { status: options.fail.status, headers: options.fail.headers },
        );
      const body = (await request.json()) as { model?: string };
      const model = body.model ?? "perplexity/sonar-deep-research";
      const id = options.jobId ?? `gen-mock-${String(++calls).padStart(4, "0")}`;
      const created = 1767000000;
      const cost = 0.05;
      generations.set(id, { model, cost });
      const envelope = { id, provider: "Mock", model, object: "chat.completion.chunk", created };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) =>
        `data: ${JSON.stringify({
          ...envelope,
          choices: [
            {
              index: 0,
              delta: { role: "assistant", ...delta },
              finish_reason: finish,
              native_finish_reason: finish,
              logprobs: null,
            },
          ],
          ...extra,
        })}\n\n`;
      const annotations = (options.citations ?? []).map((c) => ({
        type: "url_citation",
        url_citation: {
          start_index: 0,
          end_index: 0,
          title: c.title ?? c.url.replace(/^https?:\/\//, ""),
          url: c.url,
          ...(c.snippet && { content: c.snippet }),
        },
      }));
      const [first, ...rest] = pieces(report, 24);
      const frames = [
        ": OPENROUTER PROCESSING\n\n",
        chunk({ content: "", reasoning: "Planning the research." }),
        ": OPENROUTER PROCESSING\n\n",
        chunk({ content: first, ...(annotations.length && { annotations }) }),
        ...rest.map((piece) => chunk({ content: piece })),
        chunk({ content: "" }, "stop", {
          usage: {
            prompt_tokens: 12,
            completion_tokens: 120,
            total_tokens: 132,
            prompt_tokens_details: { cached_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: 80 },
            cost,
            is_byok: false,
            cost_details: { upstream_inference_cost: null },
          },
        }),
        "data: [DONE]\n\n",
      ];
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const frame of frames) controller.enqueue(encoder.encode(frame));
          controller.close();
        },
      });
      return new HttpResponse(stream, {
        headers: { "content-type": "text/event-stream", "x-generation-id": id },
      });
    }),

    http.get(`${base}/generation`, ({ request }) => {
      const id = new URL(request.url).searchParams.get("id") ?? "";
      const generation = generations.get(id);
      if (!generation)
        return HttpResponse.json({ error: { code: 404, message: "Generation not found" } }, { status: 404 });
      return HttpResponse.json({
        data: {
          id,
          model: generation.model,
          streamed: true,
          cancelled: false,
          finish_reason: "stop",
          native_finish_reason: "stop",
          tokens_prompt: 12,
          tokens_completion: 120,
          native_tokens_prompt: 12,
          native_tokens_completion: 120,
          native_tokens_reasoning: 80,
          total_cost: generation.cost,
          is_byok: false,
        },
      });
    }),
  ];
}
