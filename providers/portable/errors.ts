import { ProviderJobError, SondeError } from "../../src/errors.js";

/**
 * A job store failure, as one typed, non-retryable error. What the store had
 * acknowledged is kept, so attaching the ref once the store works again continues.
 */
export function storeError(error: unknown): SondeError {
  if (SondeError.isInstance(error)) return error;
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
