import type { ModelInfo, Pricing } from "./schema.js";

/**
 * Perplexity's Agent API (`POST /v1/agent`, providers/perplexity/WIRE.md): deep
 * research is a preset run in the background, streamed with resume (`starting_after`),
 * polled, and cancelled server-side. The provider reports its own charge
 * (`usage.cost.total_cost`), so these prices only feed estimates (e.g. of a cancelled
 * run, whose usage is null). The Sonar async API this catalog listed first answers
 * `403 chat_completions_not_available` since 2026-09-27.
 */
const capabilities = {
  streaming: true,
  background: true,
  resume: true,
  cancel: true,
  // `previous_response_id` is in the spec (providers/perplexity/WIRE.md §3 and the P6 chat captures); with presets it is unconfirmed.
  followUps: true,
  // The preset picks its own tools (web_search, fetch_url); Sonde sends none.
  tools: [],
  pollOnly: false,
} satisfies ModelInfo["capabilities"];

// Tool fees from Perplexity's pricing table (providers/perplexity/WIRE.md §13, 2026-10-09): $0.0025 per web search, $0.0005 per fetched page.
const presetPricing = (notes: string, typical: { low: number; high: number; basis: string }): Pricing => ({
  inputPerM: 0.1,
  outputPerM: 0.5,
  perThousandSearches: 2.5,
  perThousandFetches: 0.5,
  verified: false,
  source: "https://docs.perplexity.ai/getting-started/pricing",
  typicalJobUSD: { ...typical, verified: false },
  notes:
    // $0.5/M output as one observed medium run paid (WIRE.md §7, P6); $0.1/M input estimated from its cache costs.
    "No per-preset fee: tokens bill at the rate of the model the preset picks, so these token rates are unconfirmed. " +
    "Search and fetch fees are from the pricing table. The true charge is usage.cost.total_cost (costSource provider). " +
    notes,
});

export const perplexity: ModelInfo[] = [
  // Preset names and aliases from providers/perplexity/WIRE.md §2 (P3: sonar-deep-research maps to medium, formerly deep-research).
  {
    id: "perplexity:medium",
    provider: "perplexity",
    model: "medium",
    displayName: "Perplexity Deep Research (Agent API, medium preset)",
    description:
      "Background deep research on the Agent API: streamed with resume, polled, cancelled server-side. Formerly the deep-research preset.",
    capabilities,
    // The spec publishes no run limit for background runs (providers/perplexity/WIRE.md §5); the hour matches the other engines.
    limits: { maxDurationMs: 3_600_000 },
    pricing: presetPricing("One observed medium run cost $0.01599 (P6).", {
      low: 0.016,
      high: 0.05,
      basis:
        // providers/perplexity/WIRE.md §13, P6.
        "Runs of ≈ $0.016–0.05 quoted by a third party: unconfirmed.",
    }),
    lifecycle: { stage: "ga" },
    aliases: ["deep-research"],
  },
  {
    id: "perplexity:high",
    provider: "perplexity",
    model: "high",
    displayName: "Perplexity Advanced Deep Research (Agent API, high preset)",
    description:
      "The costlier, deeper preset of the Agent API (formerly advanced-deep-research), run like perplexity:medium.",
    capabilities,
    limits: { maxDurationMs: 3_600_000 },
    pricing: presetPricing("No high run was observed.", {
      low: 0.4,
      high: 0.9,
      basis:
        // providers/perplexity/WIRE.md §13, P6.
        "Runs of up to ≈ $0.4–0.9 quoted by a third party: unconfirmed.",
    }),
    lifecycle: { stage: "ga" },
    aliases: ["advanced-deep-research"],
  },
  // Kept so its id fails validation with a replacement instead of being unknown. Prices from docs.perplexity.ai/getting-started/pricing, as they were.
  {
    id: "perplexity:sonar-deep-research",
    provider: "perplexity",
    model: "sonar-deep-research",
    displayName: "Perplexity Sonar Deep Research (retired)",
    description:
      "The Sonar async job API, retired on 2026-09-27: it answers 403 chat_completions_not_available. Use perplexity:medium.",
    capabilities: {
      streaming: false,
      background: true,
      resume: false,
      cancel: false,
      followUps: false,
      tools: [],
      pollOnly: true,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 2,
      outputPerM: 8,
      internalReasoningPerM: 3,
      perThousandSearches: 5,
      verified: true,
      source: "https://docs.perplexity.ai/getting-started/pricing",
      notes: "The retired Sonar rates; citation_tokens were billed at the input rate.",
    },
    // Perplexity's own migration guide maps sonar-deep-research to the medium preset (providers/perplexity/WIRE.md §2, P3).
    lifecycle: { stage: "retired", shutdownAt: "2026-09-27T00:00:00Z", replacement: "perplexity:medium" },
  },
];
