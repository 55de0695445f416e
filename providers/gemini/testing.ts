/**
 * msw handlers that speak the Gemini Interactions wire format (steps schema) for tests one
 * level below `mockResearch`: create (streamed), GET (JSON, or a stream that resumes after
 * `last_event_id`), and cancel. The simulated Deep Research interaction thinks, searches,
 * writes the report in chunks, cites it with UTF-8 byte offsets and completes.
 * Exposed as `providerHandlers.gemini` from `sonde/testing`; msw stays a test-only import.
 */
import type { HttpHandler, HttpResponse } from "msw";
import { loadMsw } from "../../src/testing/msw/load.js";
import type { ProviderMockOptions } from "../../src/testing/provider-mock.js";
import { DEFAULT_BASE_URL } from "./wire.js";

const AGENT = "deep-research-preview-04-2026";

/** One SSE event as the server writes it: `event:` + `data:` lines and a blank line. */
export function sseBlock(event: Record<string, unknown>): string {
  return `event: ${String(event.event_type)}\ndata: ${JSON.stringify(event)}\n\n`;
}

const utf8 = (text: string) => new TextEncoder().encode(text).length;

/** Splits into chunks of whole code points (a real server never splits a character in JSON). */
function chunks(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

export interface SimulatedInteraction {
  id: string;
  /** The stream events of the whole run, in order. */
  events: Record<string, unknown>[];
  /** The stored interaction once completed (what GET returns). */
  final: Record<string, unknown>;
}

/** A whole Deep Research run over `report`, each citation spanning the report (byte offsets). */
export function simulateInteraction(options: ProviderMockOptions = {}): SimulatedInteraction {
  const id = options.jobId ?? "v1_ChdNb2NrSW50ZXJhY3Rpb24wMDAwMDAwMDAwMDAw";
  const report = options.report ?? "Mock report.";
  const query = "mock research question";
  const annotations = (options.citations ?? []).map((citation) => ({
    type: "url_citation",
    url: citation.url,
    title: citation.title ?? new URL(citation.url).hostname,
    start_index: 0,
    end_index: utf8(report),
  }));
  const usage = {
    total_tokens: 1_500 + report.length,
    total_input_tokens: 1_200,
    total_output_tokens: report.length,
    total_tool_use_tokens: 200,
    total_thought_tokens: 100,
    grounding_tool_count: [{ type: "google_search", count: 1 }],
  };
  let n = 0;
  const eventId = () => `ev_${String(++n).padStart(4, "0")}`;
  const events: Record<string, unknown>[] = [
    {
      interaction: { id, status: "in_progress", object: "interaction", agent: AGENT },
      event_type: "interaction.created",
    },
    { interaction_id: id, status: "in_progress", event_type: "interaction.status_update" },
    { index: 0, step: { type: "thought" }, event_type: "step.start" },
    {
      index: 0,
      delta: { content: { type: "text", text: "**Planning the research**" }, type: "thought_summary" },
      event_id: eventId(),
      event_type: "step.delta",
    },
    { index: 0, event_id: eventId(), event_type: "step.stop" },
    {
      index: 1,
      step: { id: "gs_mock", signature: "", type: "google_search_call" },
      event_id: eventId(),
      event_type: "step.start",
    },
    {
      index: 1,
      delta: { type: "google_search_call", arguments: { queries: [query] } },
      event_id: eventId(),
      event_type: "step.delta",
    },
    { index: 1, event_id: eventId(), event_type: "step.stop" },
    {
      index: 2,
      step: { call_id: "gs_mock", signature: "", type: "google_search_result" },
      event_id: eventId(),
      event_type: "step.start",
    },
    {
      index: 2,
      delta: { type: "google_search_result", result: [{ search_suggestions: "<div></div>" }] },
      event_id: eventId(),
      event_type: "step.delta",
    },
    { index: 2, event_id: eventId(), event_type: "step.stop" },
    { index: 3, step: { type: "model_output" }, event_id: eventId(), event_type: "step.start" },
    ...chunks(report, 24).map((text) => ({
      index: 3,
      delta: { text, type: "text" },
      event_id: eventId(),
      event_type: "step.delta",
    })),
    ...(annotations.length
      ? [
          {
            index: 3,
            delta: { annotations, type: "text_annotation_delta" },
            event_id: eventId(),
            event_type: "step.delta",
          },
        ]
      : []),
    { index: 3, event_id: eventId(), event_type: "step.stop" },
  ];
  const created = "2026-07-01T10:00:00Z";
  const updated = "2026-07-01T10:12:00Z";
  events.push({
    interaction: { id, status: "completed", usage, created, updated, object: "interaction", agent: AGENT },
    event_id: eventId(),
    event_type: "interaction.completed",
  });
  const final = {
    id,
    object: "interaction",
    agent: AGENT,
    status: "completed",
    created,
    updated,
    steps: [
      { type: "user_input", content: [{ type: "text", text: query }] },
      { type: "thought", summary: [{ type: "text", text: "**Planning the research**" }] },
      { type: "google_search_call", id: "gs_mock", arguments: { queries: [query] } },
      { type: "google_search_result", call_id: "gs_mock", result: [{ search_suggestions: "<div></div>" }] },
      { type: "model_output", content: [{ type: "text", text: report, annotations }] },
    ],
    usage,
  };
  return { id, events, final };
}

function sse(events: Record<string, unknown>[], done: boolean): HttpResponse<string> {
  const { HttpResponse } = loadMsw();
  const body = events.map(sseBlock).join("") + (done ? "data: [DONE]\n\n" : "");
  return new HttpResponse(body, { headers: { "content-type": "text/event-stream" } });
}

/**
 * Handlers for one simulated interaction. The job completes once its create stream has
 * been served; a cancel before that returns it `cancelled`, after it Gemini's refusal.
 */
export function handlers(options: ProviderMockOptions = {}): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  const base = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const run = simulateInteraction(options);
  let status: "none" | "in_progress" | "completed" | "cancelled" = "none";
  const stored = () =>
    status === "completed"
      ? run.final
      : {
          id: run.id,
          object: "interaction",
          agent: AGENT,
          status: status === "none" ? "in_progress" : status,
        };
  const notFound = () =>
    HttpResponse.json(
      { error: { code: 404, message: "Interaction not found.", status: "NOT_FOUND" } },
      { status: 404 },
    );
  return [
    http.post(`${base}/interactions`, () => {
      if (options.fail)
        return HttpResponse.json(
          options.fail.body ?? { error: { code: options.fail.status, message: "mock failure" } },
          {
            status: options.fail.status,
            ...(options.fail.headers && { headers: options.fail.headers }),
          },
        );
      status = "completed";
      return sse(run.events, true);
    }),
    http.post(`${base}/interactions/:id/cancel`, ({ params }) => {
      if (params.id !== run.id) return notFound();
      if (status !== "in_progress")
        return HttpResponse.json(
          {
            error: {
              code: 400,
              message: "Interaction is not in progress and cannot be cancelled.",
              status: "FAILED_PRECONDITION",
            },
          },
          { status: 400 },
        );
      status = "cancelled";
      return HttpResponse.json(stored());
    }),
    http.get(`${base}/interactions/:id`, ({ params, request }) => {
      if (params.id !== run.id) return notFound();
      const url = new URL(request.url);
      if (url.searchParams.get("stream") !== "true") return HttpResponse.json(stored());
      const after = url.searchParams.get("last_event_id");
      const from = after ? run.events.findIndex((event) => event.event_id === after) + 1 : 0;
      return sse(run.events.slice(from), true);
    }),
  ];
}
