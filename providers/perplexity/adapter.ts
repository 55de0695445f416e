/**
 * Perplexity deep research on the Agent API (providers/perplexity/WIRE.md): a
 * preset run in the background (`POST /v1/agent`), streamed and resumed with
 * `starting_after`, polled after a refused resume (or when `stream: false`), cancelled
 * with `POST /v1/agent/{id}/cancel`. The protocol is src/protocols/responses; this file
 * gives it Perplexity's paths, client, `[web:N]` citations and `usage.cost`.
 * The create has no idempotency key: it is sent once, ever (a 5xx too is indeterminate).
 */
import { perplexity } from "../../catalog/perplexity.js";
import { ModelRetiredError } from "../../src/errors.js";
import { responsesAdapter } from "../../src/protocols/responses/adapter.js";
import type { ResponsesEngine } from "../../src/protocols/responses/dialect.js";
import type { ProviderContext, ResearchAdapter } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { WebMarkers } from "./citations.js";
import {
  isIndeterminateCreateFailure,
  isStreamRefused,
  perplexityHttp,
  REPLACEMENT,
  RETIRED_MODEL,
  SONAR_SHUTDOWN,
} from "./http.js";
import { createBody, settingsOf, supportedOptions, validateRequest } from "./request.js";
import { perplexitySettingsSchema } from "./settings.js";
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

const agent = responsesAdapter({
  engine: perplexityEngine,
  models: perplexity,
  supports: supportedOptions,
  validate: validateRequest,
  createBody,
  pollOnly: (context) => !settingsOf(context).stream,
  cancelWaitMs: (context) => {
    const value = context.settings.cancelWaitMs;
    return typeof value === "number" && value >= 0 ? value : CANCEL_WAIT_MS;
  },
});

/** A ref of the retired Sonar engine names a job the Agent API never had: say so before any request. */
function guard(ref: JobRef): void {
  if (ref.model === RETIRED_MODEL) throw new ModelRetiredError(RETIRED_MODEL, SONAR_SHUTDOWN, REPLACEMENT);
}

export const perplexityAdapter: ResearchAdapter = {
  ...agent,
  settingsSchema: perplexitySettingsSchema,
  checkRef: guard,
  attach(ref, context) {
    guard(ref);
    return agent.attach(ref, context);
  },
  get(ref, context) {
    guard(ref);
    return agent.get(ref, context);
  },
  cancel(ref, context) {
    guard(ref);
    return agent.cancel(ref, context);
  },
};
