/**
 * The create body for a Deep Research agent (WIRE.md §3): background is mandatory, streaming and
 * storage are on (resume and follow-ups need a stored interaction), and collaborative
 * planning is off, or the agent would stop at a plan instead of running unattended.
 */
import { InvalidRequestError, UnsupportedOptionError } from "../../src/errors.js";
import type { ResolvedRequest } from "../../src/provider.js";
import type { ToolSpec } from "../../src/request.js";

export interface CreateInteractionBody {
  agent: string;
  input: string;
  background: true;
  stream: true;
  store: true;
  agent_config: {
    type: "deep-research";
    thinking_summaries: "auto" | "none";
    /** Charts arrive as images, which a text report cannot carry. */
    visualization: "off";
    collaborative_planning: false;
  };
  system_instruction?: string;
  tools?: Record<string, unknown>[];
  previous_interaction_id?: string;
}

const FILE_SEARCH_STORE = /^fileSearchStores\/[^/]+$/;

/** Field checks the catalog cannot express (called by `validate()` before any network). */
export function checkRequest(request: ResolvedRequest): void {
  const summary = request.reasoning?.summary;
  if (summary && summary !== "auto") {
    throw new UnsupportedOptionError(
      "reasoning",
      `Gemini Deep Research has one thought-summary level; reasoning.summary "${summary}" cannot be honoured. Use "auto", or includeThinking: false for none.`,
    );
  }
  for (const tool of request.tools ?? []) {
    if (tool.type !== "file_search") continue;
    const bad = tool.vectorStoreIds.find((id) => !FILE_SEARCH_STORE.test(id));
    if (bad !== undefined) {
      throw new InvalidRequestError(
        `Gemini file_search takes File Search store names like "fileSearchStores/my-store"; got "${bad}".`,
      );
    }
  }
}

/** Sonde tools → Interactions tools. Giving tools replaces the agent's defaults. */
function toWireTools(tools: ToolSpec[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const tool of tools) {
    switch (tool.type) {
      case "web_search":
        // Searching without reading the pages found would starve the agent: keep url_context with it.
        out.push({ type: "google_search" }, { type: "url_context" });
        break;
      case "code_interpreter":
        out.push({ type: "code_execution" });
        break;
      case "file_search":
        out.push({ type: "file_search", file_search_store_names: tool.vectorStoreIds });
        break;
      case "mcp":
        out.push({
          type: "mcp_server",
          name: tool.label,
          url: tool.serverUrl,
          ...(tool.allowedTools && { allowed_tools: [{ tools: tool.allowedTools }] }),
        });
        break;
    }
  }
  return out;
}

/** `instructions`, `asOf` and `output` go to the system instruction; the query is the input. */
function systemInstruction(request: ResolvedRequest): string | undefined {
  const parts: string[] = [];
  if (request.instructions?.trim()) parts.push(request.instructions.trim());
  if (request.asOf)
    parts.push(
      `Research as of ${request.asOf}: treat that date as today, and do not rely on anything published after it.`,
    );
  if (request.output) parts.push(`Deliver the report in this form: ${request.output}`);
  return parts.length ? parts.join("\n\n") : undefined;
}

export function buildCreateBody(request: ResolvedRequest): CreateInteractionBody {
  const instruction = systemInstruction(request);
  return {
    agent: request.providerModel,
    input: request.query,
    background: true,
    stream: true,
    store: true,
    agent_config: {
      type: "deep-research",
      thinking_summaries: request.reasoning?.includeThinking === false ? "none" : "auto",
      visualization: "off",
      collaborative_planning: false,
    },
    ...(instruction && { system_instruction: instruction }),
    ...(request.tools?.length && { tools: toWireTools(request.tools) }),
    ...(request.previousJobId && { previous_interaction_id: request.previousJobId }),
  };
}
