/**
 * msw handlers that speak the OpenAI Responses wire format (`providerHandlers.openai`
 * in `sonde/testing`): create (streamed or not), stream and resume with
 * `starting_after`, poll, and cancel, for one simulated background response per POST.
 * msw is imported here only: it stays a test-time dependency of users.
 */
import type { HttpHandler, HttpResponse } from "msw";
import { loadMsw } from "../../src/testing/msw/load.js";
import type { ProviderMockOptions } from "../../src/testing/provider-mock.js";
import { DEFAULT_BASE_URL } from "./http.js";

interface MockJob {
  id: string;
  model: string;
  stream: boolean;
  polls: number;
  cancelled: boolean;
}

const USAGE = {
  input_tokens: 1200,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 800,
  output_tokens_details: { reasoning_tokens: 500 },
  total_tokens: 2000,
};

function responseObject(job: MockJob, status: string, output: unknown[] = [], usage: unknown = null) {
  return {
    id: job.id,
    object: "response",
    created_at: 1767000000,
    status,
    background: true,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: job.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: "medium", summary: null },
    service_tier: "auto",
    store: true,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [{ type: "web_search_preview", search_context_size: "medium", user_location: null }],
    top_p: 1,
    truncation: "disabled",
    usage,
    user: null,
    metadata: {},
  };
}

/** The finished output: one web search, then the report with one `url_citation` per citation. */
function finalOutput(job: MockJob, report: string, citations: ProviderMockOptions["citations"]) {
  const length = Array.from(report).length;
  const annotations = (citations ?? []).map((citation) => ({
    type: "url_citation",
    // Indexes count code points, as the server does; each citation covers the whole report.
    start_index: 0,
    end_index: length,
    title: citation.title ?? citation.url,
    url: citation.url,
  }));
  const search = {
    id: `ws_${job.id.slice(5, 21)}`,
    type: "web_search_call",
    status: "completed",
    action: {
      type: "search",
      query: "mock research query",
      sources: (citations ?? []).map((c) => ({ type: "url", url: c.url })),
    },
  };
  const part = { type: "output_text", annotations, logprobs: [], text: report };
  const message = {
    id: `msg_${job.id.slice(5, 21)}`,
    type: "message",
    status: "completed",
    content: [part],
    role: "assistant",
  };
  return { search, message, part, annotations };
}

/** The whole SSE transcript of a job, in order, numbered from 0. */
function streamEvents(job: MockJob, report: string, citations: ProviderMockOptions["citations"]) {
  const { search, message, part, annotations } = finalOutput(job, report, citations);
  const item = { output_index: 1, item_id: message.id, content_index: 0 };
  const chunks = Array.from(report).reduce<string[]>((acc, char, i) => {
    if (i % 24 === 0) acc.push("");
    acc[acc.length - 1] += char;
    return acc;
  }, []);
  const events: Record<string, unknown>[] = [
    { type: "response.created", response: responseObject(job, "queued") },
    { type: "response.queued", response: responseObject(job, "queued") },
    { type: "response.in_progress", response: responseObject(job, "in_progress") },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: { id: search.id, type: "web_search_call", status: "in_progress" },
    },
    { type: "response.web_search_call.in_progress", output_index: 0, item_id: search.id },
    { type: "response.web_search_call.searching", output_index: 0, item_id: search.id },
    { type: "response.web_search_call.completed", output_index: 0, item_id: search.id },
    { type: "response.output_item.done", output_index: 0, item: search },
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { id: message.id, type: "message", status: "in_progress", content: [], role: "assistant" },
    },
    {
      type: "response.content_part.added",
      ...item,
      part: { type: "output_text", annotations: [], logprobs: [], text: "" },
    },
    ...chunks.map((delta) => ({ type: "response.output_text.delta", ...item, delta, logprobs: [] })),
    ...annotations.map((annotation, annotation_index) => ({
      type: "response.output_text.annotation.added",
      ...item,
      annotation_index,
      annotation,
    })),
    { type: "response.output_text.done", ...item, text: report, logprobs: [] },
    { type: "response.content_part.done", ...item, part },
    { type: "response.output_item.done", output_index: 1, item: message },
    { type: "response.completed", response: responseObject(job, "completed", [search, message], USAGE) },
  ];
  return events.map((event, sequence_number) => ({ type: event.type, sequence_number, ...event }));
}

function sse(events: Record<string, unknown>[]): HttpResponse<string> {
  const { HttpResponse } = loadMsw();
  const body = events
    .map((event) => `event: ${event.type as string}\ndata: ${JSON.stringify(event)}\n\n`)
    .join("");
  return new HttpResponse(body, { headers: { "content-type": "text/event-stream; charset=utf-8" } });
}

const notFound = (id: string) =>
  loadMsw().HttpResponse.json(
    {
      error: {
        message: `Response with id '${id}' not found.`,
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    },
    { status: 404 },
  );

/**
 * Handlers for one simulated OpenAI account. Each create makes a background response
 * (`options.jobId`, or a generated id); a streamed one completes in its stream, a
 * polled one reports `in_progress` on the first poll and `completed` after.
 */
export function handlers(options: ProviderMockOptions = {}): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  const base = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/$/, "");
  const report = options.report ?? "Mock report.";
  const jobs = new Map<string, MockJob>();
  let created = 0;

  const finished = (job: MockJob) => {
    const { search, message } = finalOutput(job, report, options.citations);
    return responseObject(job, "completed", [search, message], USAGE);
  };

  return [
    http.post(`${base}/responses`, async ({ request }) => {
      if (options.fail) {
        return HttpResponse.json(
          options.fail.body ?? {
            error: { message: "Mock failure", type: "server_error", param: null, code: null },
          },
          {
            status: options.fail.status,
            ...(options.fail.headers && { headers: options.fail.headers }),
          },
        );
      }
      const body = (await request.json().catch(() => ({}))) as { model?: unknown; stream?: unknown };
      created++;
      const id = options.jobId ?? `resp_mock${created.toString(16).padStart(8, "0")}0000000000000000`;
      const job: MockJob = {
        id,
        model: typeof body.model === "string" ? body.model : "gpt-5.5-pro",
        stream: body.stream === true,
        polls: 0,
        cancelled: false,
      };
      jobs.set(id, job);
      return job.stream
        ? sse(streamEvents(job, report, options.citations))
        : HttpResponse.json(responseObject(job, "queued"));
    }),

    http.get(`${base}/responses/:id`, ({ params, request }) => {
      const id = String(params.id);
      const job = jobs.get(id);
      if (!job) return notFound(id);
      const url = new URL(request.url);
      if (url.searchParams.get("stream") === "true") {
        const after = url.searchParams.get("starting_after");
        const events = streamEvents(job, report, options.citations);
        return sse(
          after === null ? events : events.filter((e) => (e.sequence_number as number) > Number(after)),
        );
      }
      if (job.cancelled) return HttpResponse.json(responseObject(job, "cancelled"));
      job.polls++;
      return HttpResponse.json(
        job.stream || job.polls > 1 ? finished(job) : responseObject(job, "in_progress"),
      );
    }),

    http.post(`${base}/responses/:id/cancel`, ({ params }) => {
      const id = String(params.id);
      const job = jobs.get(id);
      if (!job) return notFound(id);
      // Cancel is idempotent and answers with the Response: a finished job stays finished.
      if (!job.cancelled && (job.stream || job.polls > 1)) return HttpResponse.json(finished(job));
      job.cancelled = true;
      return HttpResponse.json(responseObject(job, "cancelled"));
    }),
  ];
}
