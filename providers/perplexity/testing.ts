/**
 * msw handlers that speak Perplexity's async chat-completions API
 * (perplexity-async.md §2, §7): submit (both documented paths) returns a CREATED job,
 * the same idempotency key returns the same job, the first poll says IN_PROGRESS and
 * the next COMPLETED with the report (after a `<think>` block), `citations`,
 * `search_results` and `usage` with its `cost`. Unknown ids get 404.
 */
import type { HttpHandler } from "msw";
import { loadMsw } from "../../src/testing/msw/load.js";
import type { ProviderMockOptions } from "../../src/testing/provider-mock.js";
import { defaultBaseURL } from "./adapter.js";

interface MockJob {
  id: string;
  model: string;
  polls: number;
  createdAt: number;
}

export function handlers(options: ProviderMockOptions = {}): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  const base = (options.baseURL ?? defaultBaseURL).replace(/\/$/, "");
  const report = options.report ?? "Mock report.";
  const citations = options.citations ?? [];
  const jobs = new Map<string, MockJob>();
  const byKey = new Map<string, MockJob>();
  let count = 0;

  const snapshot = (job: MockJob) => {
    const common = { id: job.id, model: job.model, created_at: job.createdAt, started_at: job.createdAt + 2 };
    if (job.polls < 2) return { ...common, status: "IN_PROGRESS" };
    return {
      ...common,
      completed_at: job.createdAt + 180,
      failed_at: null,
      status: "COMPLETED",
      error_message: null,
      response: {
        id: job.id,
        model: job.model,
        created: job.createdAt + 180,
        object: "chat.completion",
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            message: { role: "assistant", content: `<think>\nPlanning the searches.\n</think>\n${report}` },
          },
        ],
        citations: citations.map((c) => c.url),
        search_results: citations.map((c) => ({
          title: c.title ?? c.url,
          url: c.url,
          date: "2026-01-01",
          snippet: c.snippet ?? "",
          source: "web",
        })),
        usage: {
          prompt_tokens: 12,
          completion_tokens: 300,
          total_tokens: 312,
          citation_tokens: 4000,
          num_search_queries: 6,
          reasoning_tokens: 9000,
          search_context_size: "low",
          cost: {
            input_tokens_cost: 0.008,
            output_tokens_cost: 0.0024,
            reasoning_tokens_cost: 0.027,
            search_queries_cost: 0.03,
            total_cost: 0.0674,
          },
        },
      },
    };
  };

  const submit = async ({ request }: { request: Request }) => {
    if (options.fail)
      return HttpResponse.json(
        options.fail.body ?? { error: { message: "Mock failure", type: "mock", code: options.fail.status } },
        {
          status: options.fail.status,
          headers: options.fail.headers,
        },
      );
    const body = (await request.json()) as { request?: { model?: string }; idempotency_key?: string };
    const key = body.idempotency_key;
    let job = key ? byKey.get(key) : undefined;
    if (!job) {
      count++;
      job = {
        id: options.jobId ?? `00000000-0000-4000-8000-${String(count).padStart(12, "0")}`,
        model: body.request?.model ?? "sonar-deep-research",
        polls: 0,
        createdAt: 1767000000,
      };
      jobs.set(job.id, job);
      if (key) byKey.set(key, job);
    }
    return HttpResponse.json({
      id: job.id,
      model: job.model,
      created_at: job.createdAt,
      started_at: null,
      completed_at: null,
      failed_at: null,
      status: "CREATED",
      error_message: null,
      response: null,
    });
  };

  const poll = ({ params }: { params: Record<string, string | readonly string[] | undefined> }) => {
    const job = jobs.get(String(params.id));
    if (!job) return HttpResponse.json({ detail: "Not Found" }, { status: 404 });
    job.polls++;
    return HttpResponse.json(snapshot(job));
  };

  return [
    http.post(`${base}/async/chat/completions`, submit),
    http.post(`${base}/v1/async/sonar`, submit),
    http.get(`${base}/async/chat/completions/:id`, poll),
    http.get(`${base}/v1/async/sonar/:id`, poll),
  ];
}
