/**
 * Perplexity's usage block (providers/perplexity/WIRE.md §7): tokens as the protocol reads them,
 * searches and fetched pages from `tool_calls_details` (billing names `search_web`,
 * `fetch_url`) and the exact charge from `cost.total_cost`. A cancelled run has
 * `usage: null`: then what the stream and snapshot showed is all there is, and the core
 * prices it as an estimate.
 */
import { z } from "zod";
import type { CountedUsage } from "../../src/protocols/responses/usage.js";
import { tokenUsageOf } from "../../src/protocols/responses/usage.js";
import type { WireUsage } from "../../src/protocols/responses/wire.js";
import type { UsageReport } from "../../src/provider.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";

const count = z.number().nonnegative().nullish().catch(undefined);
const invocations = z.lazy(() => z.looseObject({ invocation: count }).nullish().catch(undefined));

const Billing = z.lazy(() =>
  z.looseObject({
    tool_calls_details: z
      .looseObject({ search_web: invocations, fetch_url: invocations })
      .nullish()
      .catch(undefined),
    cost: z.looseObject({ total_cost: count }).nullish().catch(undefined),
  }),
);

export function perplexityUsage(usage: WireUsage | null | undefined, counted: CountedUsage): UsageReport {
  const report = tokenUsageOf(usage, counted);
  if (!usage) return report;
  const billing = Billing.parse(usage, UNCOMPILED);
  const searches = billing.tool_calls_details?.search_web?.invocation;
  const fetches = billing.tool_calls_details?.fetch_url?.invocation;
  if (typeof searches === "number") report.searches = searches;
  if (typeof fetches === "number") report.fetches = fetches;
  const total = billing.cost?.total_cost;
  if (typeof total === "number") report.providerCostUSD = total;
  return report;
}
