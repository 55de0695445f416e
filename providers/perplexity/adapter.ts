/**
 * Perplexity deep research on the Agent API (providers/perplexity/WIRE.md): a
 * preset run in the background (`POST /v1/agent`), streamed and resumed with
 * `starting_after`, polled after a refused resume (or when `stream: false`), cancelled
 * with `POST /v1/agent/{id}/cancel`. The protocol is src/protocols/responses; this file
 * gives it Perplexity's paths, client, `[web:N]` citations and `usage.cost`.
 * The create has no idempotency key: it is sent once, ever (a 5xx too is indeterminate).
 */
import { responsesAdapter } from "../../src/protocols/responses/adapter.js";
import type { ResponsesEngine } from "../../src/protocols/responses/dialect.js";
import { ReasoningTrace } from "../../src/protocols/responses/reasoning-trace.js";
import type { ProviderContext, ResearchAdapter } from "../../src/provider.js";
import { WebMarkers } from "./citations.js";
import { isIndeterminateCreateFailure, isStreamRefused, perplexityHttp } from "./http.js";
import { createBody, settingsOf } from "./request.js";
import { perplexitySpec } from "./spec.js";
import { perplexityTrail } from "./trail.js";
import { perplexityUsage } from "./usage.js";

/** How long cancel() polls for `cancelled` after the ack (`perplexity.cancelWaitMs`). */
const CANCEL_WAIT_MS = 30_000;

const responsePath = (context: Pick<ProviderContext, "settings">, id: string) =>
  `${settingsOf(context).agentPath}/${encodeURIComponent(id)}`;

export const perplexityEngine: ResponsesEngine = {
  dialect: {
    provider: "perplexity",
    label: "Perplexity",
    usage: perplexityUsage,
    inlineCitations: () => new WebMarkers(),
    trail: perplexityTrail,
    reasoningTrace: ReasoningTrace,
  },
  endpoints: {
    http: perplexityHttp,
    createPath: (context) => settingsOf(context).agentPath,
    responsePath,
    cancelPath: (context, id) => `${responsePath(context, id)}/cancel`,
    isStreamRefused,
    isIndeterminateCreateFailure,
    dashboardHint: "perplexity.ai/account/api (usage)",
  },
};

export const perplexityAdapter: ResearchAdapter = responsesAdapter(perplexitySpec, {
  engine: perplexityEngine,
  createBody,
  pollOnly: (context) => !settingsOf(context).stream,
  cancelWaitMs: (context) => {
    const value = context.settings.cancelWaitMs;
    return typeof value === "number" && value >= 0 ? value : CANCEL_WAIT_MS;
  },
});
