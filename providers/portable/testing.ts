/**
 * msw handlers for the portable engine's wire: an OpenAI-compatible
 * `POST /chat/completions` that answers the research loop's prompts (deterministically,
 * like the offline demo model), a Tavily-compatible `POST /search` over a small simulated
 * web, and that web's pages as HTML. With them, `portable:openrouter/…` (or any
 * `portable:<chat>/…` pointed at `baseURL`) runs its real HTTP paths in a test.
 * msw is imported here only: it stays a test-time dependency of users.
 */
import type { HttpHandler } from "msw";
import { loadMsw } from "../../src/testing/msw/load.js";
import type { ProviderMockOptions } from "../../src/testing/provider-mock.js";
import { type DemoDocument, demoCorpus } from "./demo/corpus.js";
import { corpusSearch, demoAnswer } from "./demo/model.js";
import { readPrompt } from "./prompts.js";
import type { ChatMessage } from "./types.js";

export interface PortableMockOptions extends ProviderMockOptions {
  /**
   * The simulated web: each page is served as HTML at its URL and found by the simulated
   * search. @defaultValue `citations` as pages (their snippet as text), else the demo corpus
   */
  pages?: { url: string; title?: string; text: string }[];
  /** Where the Tavily-compatible search listens. @defaultValue "https://api.tavily.com" */
  searchBaseURL?: string;
}

const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

function completion(model: string, content: string, messages: ChatMessage[]) {
  const prompt = Math.ceil(messages.reduce((n, m) => n + m.content.length, 0) / 4);
  const output = Math.ceil(content.length / 4);
  return {
    id: `chatcmpl-mock${Math.random().toString(36).slice(2, 14)}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: output,
      total_tokens: prompt + output,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
    system_fingerprint: null,
  };
}

/**
 * Handlers for `providerHandlers.portable(options)`. `baseURL` is the chat endpoint
 * (default OpenRouter's, `https://openrouter.ai/api/v1`); `fail` makes every chat call
 * answer with that status and body; `report` opens the simulated report. Portable job ids
 * are made locally, so `jobId` does not apply.
 */
export function handlers(options: PortableMockOptions = {}): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  const baseURL = (options.baseURL ?? "https://openrouter.ai/api/v1").replace(/\/$/, "");
  const searchBaseURL = (options.searchBaseURL ?? "https://api.tavily.com").replace(/\/$/, "");
  const pages: DemoDocument[] = options.pages
    ? options.pages.map((p) => ({ url: p.url, title: p.title ?? p.url, text: p.text }))
    : options.citations?.length
      ? options.citations.map((c) => ({
          url: c.url,
          title: c.title ?? c.url,
          text: c.snippet ?? c.title ?? c.url,
        }))
      : [...demoCorpus];
  const search = corpusSearch(pages, 5);

  return [
    http.post(`${baseURL}/chat/completions`, async ({ request }) => {
      if (options.fail) {
        return HttpResponse.json(
          (options.fail.body ?? { error: { message: "Simulated failure." } }) as never,
          {
            status: options.fail.status,
            ...(options.fail.headers && { headers: options.fail.headers }),
          },
        );
      }
      const body = (await request.json()) as { model?: string; messages?: ChatMessage[] };
      const messages = body.messages ?? [];
      let content = demoAnswer(messages);
      if (options.report && readPrompt(messages).input.task === "write") {
        const draft = JSON.parse(content) as { sections: { paragraphs: string[] }[] };
        draft.sections[0] = { ...draft.sections[0], paragraphs: [options.report] };
        content = JSON.stringify(draft);
      }
      return HttpResponse.json(completion(body.model ?? "mock-model", content, messages) as never);
    }),
    http.post(`${searchBaseURL}/search`, async ({ request }) => {
      const body = (await request.json()) as { query?: string; max_results?: number };
      const results = await search.search(body.query ?? "", { signal: request.signal });
      return HttpResponse.json({
        query: body.query ?? "",
        follow_up_questions: null,
        answer: null,
        images: [],
        results: results.slice(0, body.max_results ?? 5).map((r, i) => ({
          url: r.url,
          title: r.title ?? r.url,
          content: r.snippet ?? "",
          score: Math.round((0.9 - i * 0.1) * 100) / 100,
          raw_content: null,
        })),
        response_time: 0.42,
      });
    }),
    ...pages.map((page) =>
      http.get(page.url, () =>
        HttpResponse.html(
          `<!doctype html><html><head><title>${escapeHtml(page.title)}</title></head><body><article>${page.text
            .split(/\n{2,}/)
            .map((p) => `<p>${escapeHtml(p)}</p>`)
            .join("")}</article></body></html>`,
        ),
      ),
    ),
  ];
}
