import type { ModelInfo } from "./schema.js";

/**
 * Perplexity async chat completions (shared/providers/perplexity-async.md): submit,
 * poll, report whole at the end; no cancel, no streaming, no resume. The provider
 * reports its own charge (`usage.cost.total_cost`), so these prices only feed estimates.
 */
export const perplexity: ModelInfo[] = [
  // Capabilities from perplexity-async.md §2; $2 in / $8 out / $2 citation / $3 reasoning per M and $5 per 1,000 searches from docs.perplexity.ai/getting-started/pricing.
  {
    id: "perplexity:sonar-deep-research",
    provider: "perplexity",
    model: "sonar-deep-research",
    displayName: "Perplexity Sonar Deep Research",
    description: "Async job API: submit, poll, and receive the report whole; no server-side cancel.",
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
      notes:
        "citation_tokens are billed at $2/M, the same as input: add them to input tokens when estimating. reasoning_tokens map to internalReasoningTokens. The synthetic cost object in perplexity-async.md §7 is consistent with these rates.",
    },
    // Perplexity's pricing page says Sonar (chat completions) "will be supported until September 27, 2026"; shutdownAt is left unset pending a project decision, because setting it makes validation reject this id from that date.
    lifecycle: { stage: "deprecated" },
  },
];
