import type { ResolvedRequest } from "../../src/provider.js";

/** The system message: instructions, the "as of" date and the desired output, when given. */
function systemPrompt(request: ResolvedRequest): string | undefined {
  const parts: string[] = [];
  if (request.instructions) parts.push(request.instructions);
  if (request.asOf) parts.push(`Research as of ${request.asOf}: treat that date as today.`);
  if (request.output) parts.push(`Write the report as: ${request.output}`);
  return parts.length ? parts.join("\n\n") : undefined;
}

/** Async submit body: the chat request wrapped in `request`, with the idempotency key beside it (§2). */
export function submitBody(request: ResolvedRequest, idempotencyKey: string): Record<string, unknown> {
  const system = systemPrompt(request);
  return {
    request: {
      model: request.providerModel,
      messages: [
        ...(system ? [{ role: "system", content: system }] : []),
        { role: "user", content: request.query },
      ],
    },
    idempotency_key: idempotencyKey,
  };
}
