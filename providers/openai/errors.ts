/** OpenAI's readings of a failed response beyond its status (loaded with the first failure). */
import { InsufficientCreditError, type SondeError } from "../../src/errors.js";
import { WireErrorBody } from "../../src/protocols/responses/error-body.js";
import { errorFromFailure } from "../../src/transport/error-body.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import type { HttpFailure } from "../../src/transport/http.js";

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
