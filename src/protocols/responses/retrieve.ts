/**
 * One Response read back by id: what `get()` and `cancel()` share. A body that is no
 * Response object is the provider's failure.
 */
import { ProviderUnavailableError } from "../../errors.js";
import type { ProviderContext } from "../../provider.js";
import type { JobRef } from "../../ref.js";
import { UNCOMPILED } from "../../transport/fast-json.js";
import type { ResponsesEngine } from "./dialect.js";
import { WireResponse } from "./wire.js";

export function parseResponse(engine: ResponsesEngine, json: unknown): WireResponse {
  const parsed = WireResponse.safeParse(json, UNCOMPILED);
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
