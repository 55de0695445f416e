/**
 * The create-response body (`POST /v1/responses`) for a research request, and the
 * engine-level checks that must fail before anything reaches the network.
 */
import { InvalidRequestError, UnsupportedOptionError } from "../../src/errors.js";
import type { ResolvedRequest } from "../../src/provider.js";
import type { RequestOption, ToolSpec } from "../../src/request.js";

/** Request fields this engine honours (the core rejects every other one that is set). */
export const supportedOptions: readonly RequestOption[] = [
  "instructions",
  "asOf",
  "output",
  "tools",
  "maxToolCalls",
  "reasoning",
  // The core rejects it for models whose catalog entry has no follow-ups.
  "previousJobId",
];

/** The server refuses file_search with more vector stores than this. */
export const MAX_VECTOR_STORES = 2;

export function validateRequest(request: ResolvedRequest): void {
  const tools = request.tools ?? [];
  const stores = tools.flatMap((tool) => (tool.type === "file_search" ? tool.vectorStoreIds : []));
  if (stores.length > MAX_VECTOR_STORES) {
    throw new UnsupportedOptionError(
      "tools",
      `${request.modelInfo.id}: file_search takes at most ${MAX_VECTOR_STORES} vector store ids in all; ` +
        `got ${stores.length}. Merge the files into fewer vector stores.`,
    );
  }
  for (const tool of tools) {
    if (tool.type === "mcp" && (!tool.serverUrl || !tool.label)) {
      throw new InvalidRequestError(
        `${request.modelInfo.id}: an mcp tool needs both "serverUrl" and "label" (the server's name in the run).`,
      );
    }
  }
}

type WireTool =
  | { type: "web_search_preview" }
  | { type: "file_search"; vector_store_ids: string[] }
  | {
      type: "mcp";
      server_label: string;
      server_url: string;
      require_approval: "never";
      allowed_tools?: string[];
    }
  | { type: "code_interpreter"; container: { type: "auto" } };

function wireTool(tool: ToolSpec): WireTool {
  // Research models accept the preview search tool (the cookbook calls it required).
  if (tool.type === "web_search") return { type: "web_search_preview" };
  if (tool.type === "file_search") return { type: "file_search", vector_store_ids: tool.vectorStoreIds };
  if (tool.type === "mcp") {
    // A background job cannot stop to ask for approval: it would wait forever.
    return {
      type: "mcp",
      server_label: tool.label,
      server_url: tool.serverUrl,
      require_approval: "never",
      ...(tool.allowedTools && { allowed_tools: tool.allowedTools }),
    };
  }
  return { type: "code_interpreter", container: { type: "auto" } };
}

function wireTools(request: ResolvedRequest): WireTool[] {
  const tools = (request.tools ?? []).map(wireTool);
  // Research needs at least one data source; web search is the one every user has.
  return tools.length > 0 ? tools : [{ type: "web_search_preview" }];
}

/** `instructions` plus the options that are instructions to the model (as-of date, report form). */
function instructionsOf(request: ResolvedRequest): string | undefined {
  const lines: string[] = [];
  if (request.instructions) lines.push(request.instructions);
  if (request.asOf)
    lines.push(
      `Research as of ${request.asOf}: treat that date as today and leave out anything published after it.`,
    );
  if (request.output) lines.push(`Write the report in this form: ${request.output}`);
  return lines.length ? lines.join("\n\n") : undefined;
}

export function createBody(request: ResolvedRequest): Record<string, unknown> {
  const streaming = request.modelInfo.capabilities.streaming && !request.modelInfo.capabilities.pollOnly;
  // Summaries only when asked: they need a verified organization on some accounts.
  const summary = request.reasoning?.summary ?? (request.reasoning?.includeThinking ? "auto" : undefined);
  const instructions = instructionsOf(request);
  return {
    model: request.providerModel,
    input: request.query,
    ...(instructions && { instructions }),
    // Background + store: the job survives our connection and can be polled or resumed.
    background: true,
    store: true,
    stream: streaming,
    tools: wireTools(request),
    ...(request.maxToolCalls !== undefined && { max_tool_calls: request.maxToolCalls }),
    ...(summary && { reasoning: { summary } }),
    ...(request.previousJobId && { previous_response_id: request.previousJobId }),
  };
}
