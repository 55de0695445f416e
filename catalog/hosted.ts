import type { ModelInfo } from "./schema.js";

/**
 * The hosted `agents.deep_research` job endpoint (providers/hosted/WIRE.md):
 * POST to start, GET to poll, DELETE to cancel; one job in flight per organization.
 */
export const hosted: ModelInfo[] = [
  // Poll/cancel semantics from providers/hosted/WIRE.md; reservation = the spec's example estimated_cost_usd 6.0; markup 1.2 from the project's issue; max duration not specified (one-hour default assumed).
  {
    id: "hosted:agents.deep_research",
    provider: "hosted",
    model: "agents.deep_research",
    displayName: "Hosted deep research agent",
    description:
      "Hosted job API: poll-only, report delivered whole, cancellable (DELETE); one job in flight per organization.",
    capabilities: {
      streaming: false,
      background: true,
      resume: false,
      cancel: true,
      followUps: false,
      tools: [],
      pollOnly: true,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 0,
      outputPerM: 0,
      reservationUSD: 6,
      markup: 1.2,
      verified: false,
      notes:
        // The 6.00 reservation is the estimated_cost_usd in providers/hosted/WIRE.md's example; the 1.2 markup is from the project's issue, not the spec.
        "Charge = provider cost x 1.2, reported by the service as charge_usd (a cancelled job may still carry a charge); token rates are therefore 0. The 6.00 reservation and the 1.2 markup are unconfirmed. The service states no maximum job duration: 3,600,000 ms is the SDK's default timeout.",
    },
    lifecycle: { stage: "ga" },
  },
];
