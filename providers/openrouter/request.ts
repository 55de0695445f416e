import type { ResolvedRequest } from "../../src/provider.js";

interface Message {
  role: "system" | "user";
  content: string;
}

/** The system message: instructions, the "as of" date and the desired output, when given. */
export function systemPrompt(request: ResolvedRequest): string | undefined {
  const parts: string[] = [];
  if (request.instructions) parts.push(request.instructions);
  if (request.asOf) parts.push(`Research as of ${request.asOf}: treat that date as today.`);
  if (request.output) parts.push(`Write the report as: ${request.output}`);
  return parts.length ? parts.join("\n\n") : undefined;
}

/** Chat Completions body (WIRE.md §2). Streaming is mandatory; usage is asked for explicitly. */
export function requestBody(request: ResolvedRequest): Record<string, unknown> {
  const messages: Message[] = [];
  const system = systemPrompt(request);
  if (system) messages.push({ role: "system", content: system });
  messages.push({ role: "user", content: request.query });
  return {
    model: request.providerModel,
    messages,
    stream: true,
    // Deprecated upstream (usage now always arrives) but harmless, and older deployments need it.
    usage: { include: true },
    ...(request.reasoning?.includeThinking === false && { reasoning: { exclude: true } }),
  };
}
