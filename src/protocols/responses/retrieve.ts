/**
 * One Response read back by id, and polling it until it settles: what `get()` and
 * `cancel()` share. A body that is no Response object is the provider's failure.
 */
import { ProviderUnavailableError } from "../../errors.js";
import type { ProviderContext } from "../../provider.js";
import type { JobRef } from "../../ref.js";
import { pollUntilTerminal } from "../../transport/poll.js";
import type { ResponsesEngine } from "./dialect.js";
import { isTerminalWireStatus } from "./status.js";
import { WireResponse } from "./wire.js";

export function parseResponse(engine: ResponsesEngine, json: unknown): WireResponse {
  const parsed = WireResponse.safeParse(json);
  if (!parsed.success) {
    const provider = engine.dialect.provider;
    throw new ProviderUnavailableError(`${provider}: the response could not be read (no Response object).`, {
      provider,
    });
  }
  return parsed.data;
}

export async function retrieveResponse(
  engine: ResponsesEngine,
  ref: JobRef,
  context: ProviderContext,
  signal?: AbortSignal,
): Promise<WireResponse> {
  const { endpoints } = engine;
  const json = await endpoints
    .http(context)
    .get(endpoints.responsePath(context, ref.jobId), { ...(signal && { signal }) })
    .json();
  return parseResponse(engine, json);
}

/** Polls until terminal or `waitMs` passes; the last snapshot seen. */
export async function settleResponse(
  engine: ResponsesEngine,
  ref: JobRef,
  context: ProviderContext,
  first: WireResponse,
  waitMs: number,
): Promise<WireResponse> {
  let last = first;
  if (waitMs <= 0 || isTerminalWireStatus(last.status)) return last;
  const signal = AbortSignal.timeout(waitMs);
  try {
    for await (const snapshot of pollUntilTerminal({
      provider: engine.dialect.provider,
      fetch: async (s) => ({ value: await retrieveResponse(engine, ref, context, s) }),
      isTerminal: (value) => isTerminalWireStatus(value.status),
      policy: context.retry,
      signal,
      logger: context.logger,
    }))
      last = snapshot;
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  return last;
}
