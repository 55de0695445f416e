import type { ResolvedRequest } from "../../src/provider.js";

/**
 * Invoke body (hosted-job-api.md): the service takes one prompt, so instructions, the
 * "as of" date and the desired output are written into it, after the question.
 */
export function invokeBody(request: ResolvedRequest, upstream: string): Record<string, unknown> {
  const parts = [request.query];
  if (request.instructions) parts.push(request.instructions);
  if (request.asOf) parts.push(`Research as of ${request.asOf}: treat that date as today.`);
  if (request.output) parts.push(`Write the report as: ${request.output}`);
  return { inputs: { prompt: parts.join("\n\n"), provider: upstream } };
}
