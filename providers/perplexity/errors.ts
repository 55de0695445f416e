/**
 * Perplexity's readings of a failed response beyond its status, loaded with the first failure
 * (providers/perplexity/WIRE.md §8): `{"error":{"message","type","code"}}` with an integer
 * `code`, so the `type` is the code worth keeping; the retired Sonar API's 403.
 */
import { InvalidRequestError, type SondeError } from "../../src/errors.js";
import { WireErrorBody } from "../../src/protocols/responses/error-body.js";
import { errorFromFailure } from "../../src/transport/error-body.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import type { HttpFailure } from "../../src/transport/http.js";
import { sonarRetired } from "./request.js";

function errorType(body: unknown): string | undefined {
  const parsed = WireErrorBody.safeParse(body, UNCOMPILED);
  return (parsed.success && parsed.data.error?.type) || undefined;
}

export function classify(failure: HttpFailure): SondeError | undefined {
  const type = errorType(failure.body);
  const common = { provider: "perplexity" as const, status: failure.status, requestId: failure.requestId };
  // Sonar paths since the sunset: a retirement, not a bad key (providers/perplexity/WIRE.md §1, P6).
  if (failure.status === 403 && type === "chat_completions_not_available") return sonarRetired();
  if (failure.status === 400 || failure.status === 413 || failure.status === 422 || failure.status === 424)
    return new InvalidRequestError(`perplexity ${failure.status}: ${failure.message}`, {
      ...common,
      providerCode: type ?? failure.code,
    });
  // The integer `code` repeats the status: the `type` is Perplexity's name for the failure.
  return errorFromFailure({ ...failure, code: type ?? failure.code });
}
