import { ProviderJobError, SondeError } from "../../src/errors.js";

/** The `providerCode` of a chat endpoint that answered with something other than a chat completion. */
export const MALFORMED_CHAT_RESPONSE = "malformed_chat_response";

/**
 * A job store failure, as one typed, non-retryable error. What the store had
 * acknowledged is kept, so attaching the ref once the store works again continues.
 */
export function storeError(error: unknown): SondeError {
  if (SondeError.isInstance(error)) return error;
  if (isLeaseLost(error)) {
    return new ProviderJobError("lease_lost", (error as Error).message, {
      provider: "portable",
      cause: error,
    });
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new ProviderJobError(
    "store_error",
    `portable: the job store failed (${detail}). Everything it had acknowledged is kept; fix the store and attach the job's ref to continue.`,
    { provider: "portable", cause: error },
  );
}

/** Runs a store operation, mapping its failure with `storeError`. */
export async function storeCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw storeError(error);
  }
}

/**
 * Thrown by a store for a fenced write whose lease another holder has taken over. Matched
 * by name (`isLeaseLost`), so a store bundled in another entry point is recognised too.
 */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
  constructor(jobId: string, token: number) {
    super(`portable: the lease on job ${jobId} (token ${token}) was taken over by another runner.`);
  }
}

export const isLeaseLost = (error: unknown): boolean =>
  (error as { name?: unknown } | null)?.name === "LeaseLostError";
