/**
 * Cancelling a Response (`POST …/cancel`), loaded with the first cancel (adapter.ts): the ack
 * or the Response, a short poll until it settles, and what the cancel achieved.
 */
import { InvalidRequestError } from "../../errors.js";
import { isTerminal, type JobStatus } from "../../events.js";
import type { CancelOutcome, CancelReport, ProviderContext } from "../../provider.js";
import type { JobRef } from "../../ref.js";
import { UNCOMPILED } from "../../transport/fast-json.js";
import { pollUntilTerminal } from "../../transport/poll.js";
import type { ResponsesEngine } from "./dialect.js";
import { retrieveResponse } from "./retrieve.js";
import { usageOf } from "./snapshot.js";
import { isTerminalWireStatus, jobStatusOf } from "./status.js";
import { WireResponse } from "./wire.js";

/** What a cancel achieved, from the status the job was seen in afterwards. */
export function cancelOutcome(provider: string, status: JobStatus): CancelOutcome {
  if (status === "cancelled") return { outcome: "cancelled", finalStatus: "cancelled" };
  if (isTerminal(status))
    return {
      outcome: "already-terminal",
      finalStatus: status,
      detail: `The job had already ended (${status}) when the cancel arrived: it finished first.`,
    };
  return {
    outcome: "pending",
    detail: `${provider} took the cancel but the job is still ${status}; get() or attach the ref to see it stop.`,
  };
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

export async function cancelResponse(
  engine: ResponsesEngine,
  ref: JobRef,
  context: ProviderContext,
  waitMs: number,
): Promise<CancelReport> {
  const { endpoints, dialect } = engine;
  let response: WireResponse;
  let acked = false;
  try {
    const json = await endpoints.http(context).post(endpoints.cancelPath(context, ref.jobId)).json();
    const parsed = WireResponse.safeParse(json, UNCOMPILED);
    // OpenAI answers with the Response; Perplexity with an ack (`cancelling`): then look.
    acked = !parsed.success;
    response = parsed.success ? parsed.data : await retrieveResponse(engine, ref, context);
  } catch (error) {
    // A refused cancel (e.g. the job already ended): say what state it is in.
    if (!InvalidRequestError.isInstance(error)) throw error;
    response = await retrieveResponse(engine, ref, context);
    if (!isTerminal(jobStatusOf(response.status))) throw error;
  }
  if (acked) response = await settleResponse(engine, ref, context, response, waitMs);
  const outcome = cancelOutcome(dialect.label, jobStatusOf(response.status));
  if (outcome.outcome !== "cancelled") return outcome;
  // A cancelled run's usage is null: what its output shows is still worth an estimate.
  const { usage } = usageOf(engine, response);
  return { ...outcome, ...(usage && { usage }) };
}
