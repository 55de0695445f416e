/**
 * One look at a Response (`get()`: a GET, its status, and the report and usage once it has
 * ended), loaded with the first one (adapter.ts); cancel.ts reads usage the same way.
 */
import { isTerminal } from "../../events.js";
import type { ProviderContext, SnapshotReport } from "../../provider.js";
import type { JobRef } from "../../ref.js";
import type { ResponsesEngine } from "./dialect.js";
import { retrieveResponse } from "./retrieve.js";
import { jobStatusOf } from "./status.js";
import { reportOf } from "./text.js";
import type { WireResponse } from "./wire.js";

/** What its output shows counts even when `usage` is null (a cancelled run). */
export function usageOf(engine: ResponsesEngine, response: WireResponse) {
  const final = reportOf(response, engine.dialect);
  const searches = final.searchIds.length;
  const counted = response.usage || searches > 0 || final.fetches > 0;
  return {
    final,
    usage: counted ? engine.dialect.usage(response.usage, { searches, fetches: final.fetches }) : undefined,
  };
}

function snapshotOf(engine: ResponsesEngine, ref: JobRef, response: WireResponse): SnapshotReport {
  const status = jobStatusOf(response.status);
  const { final, usage } = usageOf(engine, response);
  return {
    provider: engine.dialect.provider,
    model: ref.model,
    jobId: response.id,
    status,
    ...(isTerminal(status) && final.text && { report: final.text, citations: final.citations }),
    ...(usage && { usage }),
    ...(response.error && {
      error: {
        code: response.error.code ?? response.error.type ?? "failed",
        message: response.error.message ?? "",
      },
    }),
    raw: response,
  };
}

/** One GET. The report and its citations are included once the job has ended. */
export async function getResponse(
  engine: ResponsesEngine,
  ref: JobRef,
  context: ProviderContext,
): Promise<SnapshotReport> {
  return snapshotOf(engine, ref, await retrieveResponse(engine, ref, context));
}
