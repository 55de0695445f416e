import type { ModelInfo } from "./schema.js";

/**
 * Gemini Interactions API Deep Research agents (providers/gemini/WIRE.md).
 * Tools: google_search -> web_search, file_search -> file_search, mcp_server -> mcp,
 * code_execution -> code_interpreter. `url_context` (a default tool) has no ToolType.
 * The spec states no per-token or per-search price, so pricing is `verified: false`.
 */
// Sources, not in providers/gemini/WIRE.md: the list rates per third-party models.dev citing ai.google.dev/pricing;
// the search fee from the project's issue and third-party reports; the rates reproduce the spec's per-task
// estimates (G4: $1-3 for Deep Research, $3-7 for Max); the cached rate from third-party listings citing
// ai.google.dev/gemini-api/docs/pricing (cloudprice.net, techjacksolutions.com). The notes (they reach
// estimate() and the CLI) say what a user needs of that.
const pricingNotes =
  "Agents bill at the underlying Gemini list rates (Gemini 3.1 Pro: $2/$12 per M up to 200k prompt tokens, $4/$18 above, not modelled) plus $14 per 1,000 Google Search queries, from third-party listings. A free daily search allowance exists, of unknown size, so freeSearches is unset. Cached prompt tokens: $0.20 per M (unconfirmed); cache storage is not modelled. The API returns no cost.";

export const gemini: ModelInfo[] = [
  // Agent id, background-only, stream/resume/cancel, previous_interaction_id, 60-min cap and 65,536 output tokens (G12) from providers/gemini/WIRE.md §2, §3, §8.
  {
    id: "gemini:deep-research-preview-04-2026",
    provider: "gemini",
    model: "deep-research-preview-04-2026",
    displayName: "Gemini Deep Research (preview 04-2026)",
    description: "Faster Deep Research agent, meant to be streamed to a UI.",
    capabilities: {
      streaming: true,
      background: true,
      resume: true,
      cancel: true,
      followUps: true,
      tools: ["web_search", "file_search", "mcp", "code_interpreter"],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000, maxOutputTokens: 65_536 },
    pricing: {
      inputPerM: 2,
      cachedInputPerM: 0.2,
      outputPerM: 12,
      perThousandSearches: 14,
      typicalJobUSD: {
        low: 1,
        high: 3,
        verified: false,
        source: "https://ai.google.dev/gemini-api/docs/deep-research",
        basis:
          // providers/gemini/WIRE.md G4, a snapshot of the guide with the legacy schema.
          "Google's estimate per task: about 80 searches, 250k input and 60k output tokens (not confirmed for this agent).",
      },
      verified: false,
      notes: pricingNotes,
    },
    lifecycle: { stage: "preview" },
  },
  // Agent id, capabilities and 60-min cap from providers/gemini/WIRE.md §2, §3, §8; the spec gives no output-token limit for Max.
  {
    id: "gemini:deep-research-max-preview-04-2026",
    provider: "gemini",
    model: "deep-research-max-preview-04-2026",
    displayName: "Gemini Deep Research Max (preview 04-2026)",
    description: "Most exhaustive Deep Research agent (more searches and tokens per task).",
    capabilities: {
      streaming: true,
      background: true,
      resume: true,
      cancel: true,
      followUps: true,
      tools: ["web_search", "file_search", "mcp", "code_interpreter"],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 2,
      cachedInputPerM: 0.2,
      outputPerM: 12,
      perThousandSearches: 14,
      typicalJobUSD: {
        low: 3,
        high: 7,
        verified: false,
        source: "https://ai.google.dev/gemini-api/docs/deep-research",
        basis:
          // providers/gemini/WIRE.md G4, a snapshot of the guide with the legacy schema.
          "Google's estimate per task: about 160 searches, 900k input and 80k output tokens (not confirmed for this agent).",
      },
      verified: false,
      notes: pricingNotes,
    },
    lifecycle: { stage: "preview" },
  },
];
