/**
 * msw handlers that speak Perplexity's Agent API (`providerHandlers.perplexity` in
 * `sonde/testing`; providers/perplexity/WIRE.md): a background run per `POST /v1/agent` (or the
 * `/v1/responses` alias), streamed as bare `data:` lines when asked and re-streamed with
 * `starting_after`, polled (`queued`, then the finished snapshot), and cancelled with an
 * ack (`cancelling`), after which polls show `cancelled` with `usage: null`. The report
 * cites each scripted source inline with a `[web:N]` marker matching a search result's id,
 * as the real engine does: the adapter keeps the markers as text and places each citation
 * on its marker.
 * Unknown ids get 404.
 */
import type { HttpHandler, HttpResponse } from "msw";
import { loadMsw } from "../../src/testing/msw/load.js";
import type { ProviderMockOptions } from "../../src/testing/provider-mock.js";
import { defaultBaseURL } from "./http.js";

interface MockRun {
  id: string;
  preset: string;
  polls: number;
  cancelled: boolean;
  /** A streamed run is sent whole: it has ended by the time anyone can cancel it. */
  finished: boolean;
}

/** Search result ids start at 1 and are unique within the run, as in the captures. */
const resultId = (index: number) => index + 1;

function sourcesOf(options: ProviderMockOptions) {
  return (options.citations ?? []).map((citation, index) => ({
    id: resultId(index),
    url: citation.url,
    title: citation.title ?? citation.url,
    snippet: citation.snippet ?? "",
    source: "web",
  }));
}

/**
 * The answer text as Perplexity writes it: it cites inline with `[web:N]`, `N` a search
 * result's id, right where the claim is (WIRE.md §6). A scripted `[n]` (the n-th scripted
 * citation) is written that way in place, as a `[web:N]` already is; a source the report
 * never marks is cited at its end, so every scripted source becomes a citation.
 */
function reportOf(options: ProviderMockOptions): string {
  const count = options.citations?.length ?? 0;
  const report = (options.report ?? "Mock report.").replace(/\[(\d{1,9})\]/g, (marker, n: string) =>
    Number(n) >= 1 && Number(n) <= count ? `[web:${resultId(Number(n) - 1)}]` : marker,
  );
  const unmarked = (options.citations ?? [])
    .map((_, index) => `[web:${resultId(index)}]`)
    .filter((marker) => !report.includes(marker))
    .join("");
  return unmarked ? `${report} ${unmarked}` : report;
}

function snapshot(run: MockRun, options: ProviderMockOptions, status: string) {
  const finished = status === "completed";
  const report = reportOf(options);
  const results = sourcesOf(options);
  return {
    id: run.id,
    object: "response",
    created_at: 1791572975,
    completed_at: finished ? 1791573155 : null,
    status,
    background: true,
    store: true,
    // While queued, running or cancelled, `model` holds the preset name (WIRE.md §3, P6).
    model: finished ? "openai/gpt-6-luna" : run.preset,
    error: status === "cancelled" ? { code: "cancelled", message: "cancelled", type: "cancelled" } : null,
    incomplete_details: status === "cancelled" ? { reason: "cancelled" } : null,
    previous_response_id: null,
    output: finished
      ? [
          { type: "search_results", queries: ["mock research query"], results },
          {
            type: "message",
            id: `msg_${run.id.slice(5)}`,
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", text: report, annotations: [] }],
          },
        ]
      : [],
    usage: finished
      ? {
          input_tokens: 24463,
          output_tokens: 1085,
          total_tokens: 25548,
          output_tokens_details: { reasoning_tokens: 487 },
          tool_calls_details: { search_web: { invocation: 1 } },
          cost: {
            currency: "USD",
            input_cost: 0,
            output_cost: 0.00054,
            tool_calls_cost: 0.0025,
            total_cost: 0.00304,
          },
        }
      : null,
  };
}

/** The run's stream, numbered from 0 (`sequence_number`), as Perplexity frames it: no `event:` line. */
function events(run: MockRun, options: ProviderMockOptions): Record<string, unknown>[] {
  const report = reportOf(options);
  const itemId = `msg_${run.id.slice(5)}`;
  const text = { item_id: itemId, output_index: 1, content_index: 0 };
  const chars = Array.from(report);
  const half = chars.slice(0, Math.ceil(chars.length / 2)).join("");
  const list = [
    { type: "response.created", response: snapshot(run, options, "queued") },
    { type: "response.in_progress", response: snapshot(run, options, "in_progress") },
    { type: "response.reasoning.started", thought: "Planning the searches. " },
    { type: "response.reasoning.search_queries", queries: ["mock research query"], thought: "Searching. " },
    { type: "response.reasoning.search_results", results: sourcesOf(options) },
    {
      type: "response.output_item.added",
      output_index: 1,
      item: { type: "message", id: itemId, status: "in_progress", role: "assistant", content: [] },
    },
    { type: "response.output_text.delta", ...text, delta: half },
    { type: "response.output_text.delta", ...text, delta: report.slice(half.length) },
    { type: "response.output_text.done", ...text, text: report },
    { type: "response.completed", response: snapshot(run, options, "completed") },
  ];
  return list.map((event, index) => ({ ...event, sequence_number: index }));
}

function sse(list: Record<string, unknown>[]): HttpResponse<string> {
  const { HttpResponse } = loadMsw();
  const body = list.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("");
  return new HttpResponse(body, { headers: { "content-type": "text/event-stream; charset=utf-8" } });
}

const notFound = () =>
  loadMsw().HttpResponse.json(
    { error: { message: "response not found", type: "not_found", code: 404 } },
    { status: 404 },
  );

export function handlers(options: ProviderMockOptions = {}): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  const base = (options.baseURL ?? defaultBaseURL).replace(/\/$/, "");
  const runs = new Map<string, MockRun>();
  let count = 0;

  const create = async ({ request }: { request: Request }) => {
    if (options.fail)
      return HttpResponse.json(
        options.fail.body ?? { error: { message: "Mock failure", type: "mock", code: options.fail.status } },
        { status: options.fail.status, headers: options.fail.headers },
      );
    const body = (await request.json()) as { preset?: string; effort?: string; stream?: boolean };
    count++;
    const run: MockRun = {
      id: options.jobId ?? `resp_00000000-0000-4000-8000-${String(count).padStart(12, "0")}`,
      preset: body.preset ?? body.effort ?? "medium",
      polls: 0,
      cancelled: false,
      finished: body.stream === true,
    };
    runs.set(run.id, run);
    if (body.stream) return sse(events(run, options));
    return HttpResponse.json(snapshot(run, options, "queued"));
  };

  const retrieve = ({ request, params }: { request: Request; params: Record<string, unknown> }) => {
    const run = runs.get(String(params.id));
    if (!run) return notFound();
    const url = new URL(request.url);
    if (run.cancelled) return HttpResponse.json(snapshot(run, options, "cancelled"));
    if (url.searchParams.get("stream") === "true") {
      const after = Number(url.searchParams.get("starting_after") ?? -1);
      return sse(events(run, options).filter((event) => (event.sequence_number as number) > after));
    }
    run.polls++;
    if (run.polls >= 2) run.finished = true;
    return HttpResponse.json(snapshot(run, options, run.finished ? "completed" : "in_progress"));
  };

  const cancel = ({ params }: { params: Record<string, unknown> }) => {
    const run = runs.get(String(params.id));
    if (!run) return notFound();
    if (run.finished)
      return HttpResponse.json(
        {
          error: {
            message: "the run is already terminal and cannot be cancelled",
            type: "invalid_request",
            code: 400,
          },
        },
        { status: 400 },
      );
    run.cancelled = true;
    return HttpResponse.json({ response_id: run.id, status: "cancelling" });
  };

  return ["v1/agent", "v1/responses"].flatMap((path) => [
    http.post(`${base}/${path}`, create),
    http.get(`${base}/${path}/:id`, retrieve),
    http.post(`${base}/${path}/:id/cancel`, cancel),
  ]);
}
