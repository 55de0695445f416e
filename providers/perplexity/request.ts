/**
 * The Agent API create body (`POST /v1/agent`, providers/perplexity/WIRE.md §2) and the settings
 * that shape it. The API is strict (an unknown field is a 400), so only documented
 * fields are sent.
 */
import { ModelRetiredError, UnsupportedOptionError } from "../../src/errors.js";
import type { ProviderContext, ResolvedRequest } from "../../src/provider.js";
import type { RequestOption } from "../../src/request.js";

/** The Sonar engine's id: retired on 2026-09-27, its refs and requests say so before any request. */
export const RETIRED_MODEL = "perplexity:sonar-deep-research";
export const sonarRetired = () =>
  new ModelRetiredError(RETIRED_MODEL, "2026-09-27T00:00:00Z", "perplexity:medium");

export const supportedOptions: readonly RequestOption[] = [
  "instructions",
  "asOf",
  "output",
  "maxToolCalls",
  "reasoning",
  "previousJobId",
];

/** Later docs call the preset field `effort`; whether `preset` stays accepted is unconfirmed (WIRE.md §2). */
export type PresetField = "preset" | "effort";
export const DEFAULT_PRESET_FIELD: PresetField = "preset";
/** `/v1/responses` is the documented alias. */
export const DEFAULT_AGENT_PATH = "v1/agent";

export interface PerplexitySettings {
  presetField: PresetField;
  agentPath: string;
  /** `false`: submit and poll, no stream (poll-only use). */
  stream: boolean;
}

/** The Agent API settings with their defaults (their values are checked with the client options). */
export function settingsOf(context: Pick<ProviderContext, "settings">): PerplexitySettings {
  const { presetField, agentPath, stream } = context.settings as Partial<PerplexitySettings>;
  return {
    presetField: presetField ?? DEFAULT_PRESET_FIELD,
    agentPath: (agentPath ?? DEFAULT_AGENT_PATH).replace(/^\/+|\/+$/g, ""),
    stream: stream ?? true,
  };
}

export function validateRequest(request: ResolvedRequest): void {
  // Whatever the clock says: Sonde has no Sonar engine any more, and the Agent API has no such preset.
  if (request.modelInfo.id === RETIRED_MODEL) throw sonarRetired();
  if (request.reasoning?.summary !== undefined)
    throw new UnsupportedOptionError(
      "reasoning",
      `${request.modelInfo.id} streams its reasoning as is; Perplexity has no reasoning summaries. Drop reasoning.summary (reasoning.includeThinking is supported).`,
    );
}

/** Instructions, the "as of" date and the report form, as one system message. */
function systemText(request: ResolvedRequest): string | undefined {
  const parts: string[] = [];
  if (request.instructions) parts.push(request.instructions);
  if (request.asOf)
    parts.push(
      `Research as of ${request.asOf}: treat that date as today and leave out anything published after it.`,
    );
  if (request.output) parts.push(`Write the report in this form: ${request.output}`);
  return parts.length ? parts.join("\n\n") : undefined;
}

export function createBody(request: ResolvedRequest, context: Pick<ProviderContext, "settings">) {
  const settings = settingsOf(context);
  const system = systemText(request);
  return {
    [settings.presetField]: request.providerModel,
    // Top-level `instructions` would replace the preset's system prompt, which asks for the
    // `[web:N]` markers citations come from: Sonde's instructions go in as a system message.
    input: system
      ? [
          { type: "message", role: "system", content: system },
          { type: "message", role: "user", content: request.query },
        ]
      : request.query,
    // Background + store: the run outlives the connection and can be resumed or polled.
    background: true,
    store: true,
    stream: settings.stream,
    ...(request.maxToolCalls !== undefined && { max_tool_calls: request.maxToolCalls }),
    ...(request.previousJobId && { previous_response_id: request.previousJobId }),
  };
}
