/**
 * `client.research.estimate(request)`: what the catalog knows about a job's cost before
 * anything is sent. No network, no guess beyond the catalog: a typical range only where one
 * was published, `"unknown"` otherwise.
 */
import type { Pricing } from "../catalog/schema.js";
import type { ProviderName } from "./events.js";
import type { ResolvedRequest } from "./provider.js";

export interface CostEstimate {
  /** Catalog id, `provider:model`. */
  model: string;
  provider: ProviderName;
  /** The price dimensions the job is billed by, in USD (per million tokens, per thousand searches…). */
  prices: Omit<Pricing, "typicalJobUSD" | "verified" | "source" | "notes" | "reservationUSD">;
  /** The prices were confirmed on the provider's own pages. */
  pricesConfirmed: boolean;
  /** What a job typically costs, where a figure was published; `confirmed: false` = not from the provider. */
  typical:
    | { lowUSD: number; highUSD: number; confirmed: boolean; source?: string; basis?: string }
    | "unknown";
  /** Money the provider holds when it accepts the job (the hosted API). */
  holdUSD?: number;
  /** The request's spend cap, if any. */
  maxCostUSD?: number;
  /** When the cap can act: on the running cost, or only when the job ends (poll-only engines). */
  capChecked?: "while-running" | "at-end";
  /** What validation said about the cap on this model, and the catalog's pricing notes. */
  notes: string[];
}

export function estimateOf(request: ResolvedRequest): CostEstimate {
  const { typicalJobUSD, verified, source, notes, reservationUSD, ...prices } = request.modelInfo.pricing;
  const cap = request.budget?.maxCostUSD;
  return {
    model: request.modelInfo.id,
    provider: request.provider,
    prices,
    pricesConfirmed: verified,
    typical: typicalJobUSD
      ? {
          lowUSD: typicalJobUSD.low,
          highUSD: typicalJobUSD.high,
          confirmed: typicalJobUSD.verified,
          ...(typicalJobUSD.source && { source: typicalJobUSD.source }),
          ...(typicalJobUSD.basis && { basis: typicalJobUSD.basis }),
        }
      : "unknown",
    ...(reservationUSD !== undefined && { holdUSD: reservationUSD }),
    ...(cap !== undefined && {
      maxCostUSD: cap,
      capChecked: request.modelInfo.capabilities.pollOnly ? "at-end" : "while-running",
    }),
    notes: [
      ...request.adjustments.filter((a) => a.option === "budget").map((a) => a.reason),
      ...(notes ? [notes] : []),
    ],
  };
}
