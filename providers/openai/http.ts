/**
 * The OpenAI HTTP client: base URL, auth and organization headers, and the error
 * mapping OpenAI needs beyond status codes (errors.ts, loaded with the first failure).
 */
import type { ProviderContext } from "../../src/provider.js";
import { createHttpClient, type HttpClient } from "../../src/transport/http.js";

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

export function openaiHttp(context: ProviderContext): HttpClient {
  const settings = context.settings as {
    apiKey?: string;
    baseURL?: string;
    organization?: string;
    project?: string;
  };
  return createHttpClient({
    provider: "openai",
    baseURL: settings.baseURL ?? DEFAULT_BASE_URL,
    headers: {
      Authorization: `Bearer ${settings.apiKey ?? ""}`,
      "OpenAI-Organization": settings.organization,
      "OpenAI-Project": settings.project,
    },
    fetch: context.fetch,
    clock: context.clock,
    classify: async (failure) => (await import("./errors.js")).classify(failure),
  });
}

/**
 * The server refuses to (re)stream an old background response with a 400 ("This
 * response can no longer be streamed because it is more than 5 minutes old"); the
 * job itself is fine and can still be polled.
 */
export function isStreamRefused(error: unknown): boolean {
  const e = error as { status?: unknown; message?: unknown } | null;
  return (
    !!e &&
    e.status === 400 &&
    typeof e.message === "string" &&
    /(no longer|cannot) be streamed|no longer available|too old|minutes old/i.test(e.message)
  );
}
