/**
 * The OpenAI HTTP client: base URL, auth and organization headers, and the error
 * mapping OpenAI needs beyond status codes.
 */
import { InsufficientCreditError, type SondeError } from "../../src/errors.js";
import { WireErrorBody } from "../../src/protocols/responses/wire.js";
import type { ProviderContext } from "../../src/provider.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import {
  createHttpClient,
  errorFromFailure,
  type HttpClient,
  type HttpFailure,
} from "../../src/transport/http.js";

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * A 429 whose code is `insufficient_quota` is an empty account, not a rate limit:
 * waiting will not clear it, so it must not be retried.
 */
export function classify(failure: HttpFailure): SondeError {
  const parsed = WireErrorBody.safeParse(failure.body, UNCOMPILED);
  const error = parsed.success ? parsed.data.error : undefined;
  if (
    failure.status === 429 &&
    (error?.code === "insufficient_quota" || error?.type === "insufficient_quota")
  ) {
    return new InsufficientCreditError(
      `openai 429: ${failure.message} Add credit or raise the limit at platform.openai.com/settings/organization/billing; retrying will not help.`,
      {
        provider: "openai",
        status: 429,
        providerCode: "insufficient_quota",
        ...(failure.requestId && { requestId: failure.requestId }),
      },
    );
  }
  return errorFromFailure({ ...failure, code: error?.code ?? error?.type ?? failure.code });
}

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
    classify,
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
