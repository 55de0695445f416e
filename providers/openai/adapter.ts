/**
 * The OpenAI engine: deep research as background Responses (`POST /v1/responses` with
 * `background: true`), streamed and resumed where the model streams, polled where it
 * does not, cancelled with `POST /v1/responses/{id}/cancel`. The protocol is
 * src/protocols/responses; this file gives it OpenAI's paths, client and usage reading.
 */
import { responsesAdapter } from "../../src/protocols/responses/adapter.js";
import { urlAnnotations } from "../../src/protocols/responses/annotations.js";
import type { ResponsesEngine } from "../../src/protocols/responses/dialect.js";
import { ReasoningSummary } from "../../src/protocols/responses/reasoning-summary.js";
import { toolEvent } from "../../src/protocols/responses/tool-calls.js";
import { tokenUsageOf } from "../../src/protocols/responses/usage.js";
import type { ResearchAdapter } from "../../src/provider.js";
import { isStreamRefused, openaiHttp } from "./http.js";
import { createBody } from "./request.js";
import { openaiSpec } from "./spec.js";

const responsePath = (_: unknown, id: string) => `responses/${encodeURIComponent(id)}`;

export const openaiEngine: ResponsesEngine = {
  dialect: {
    provider: "openai",
    label: "OpenAI",
    // Built-in searches are not in `usage`: the counted web_search_call items are the figure.
    usage: tokenUsageOf,
    annotations: urlAnnotations,
    reasoningSummary: ReasoningSummary,
    toolEvent,
  },
  endpoints: {
    http: openaiHttp,
    createPath: () => "responses",
    responsePath,
    cancelPath: (context, id) => `${responsePath(context, id)}/cancel`,
    isStreamRefused,
    dashboardHint: "platform.openai.com/logs",
  },
};

export const openaiAdapter: ResearchAdapter = responsesAdapter(openaiSpec, {
  engine: openaiEngine,
  createBody: (request) => createBody(request),
});
