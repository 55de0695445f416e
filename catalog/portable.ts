import type { ModelInfo } from "./schema.js";

/**
 * The portable local engine (ARCHITECTURE.md, "The portable engine"): a research loop over any OpenAI-compatible
 * chat endpoint plus a pluggable search backend. `portable:*` matches every
 * `portable:<chat-provider>/<chat-model>` id.
 */
export const portable: ModelInfo[] = [
  // Capabilities and the 900 s deadline maximum from ARCHITECTURE.md, "The portable engine" (receipts make re-attach possible); cost depends on the configured chat model and search backend.
  {
    id: "portable:*",
    provider: "portable",
    model: "*",
    displayName: "Portable engine (any OpenAI-compatible chat model)",
    description:
      "Local research loop: portable:<chat-provider>/<chat-model>, e.g. portable:openrouter/openai/gpt-5-mini.",
    capabilities: {
      streaming: true,
      background: false,
      resume: true,
      cancel: true,
      followUps: false,
      tools: ["web_search"],
      pollOnly: false,
    },
    limits: { maxDurationMs: 900_000 },
    pricing: {
      inputPerM: 0,
      outputPerM: 0,
      verified: false,
      notes:
        "Cost depends on the chosen chat model and search backend, neither of which the catalog knows; the zeros are placeholders, not a price.",
    },
    lifecycle: { stage: "ga" },
  },
  // Offline scripted demo chat model used by `npm run demo` (package.json); makes no network calls, so it costs nothing.
  {
    id: "portable:demo/offline",
    provider: "portable",
    model: "demo/offline",
    displayName: "Portable engine, offline demo",
    description: "Scripted offline chat model and corpus for `npm run demo`; no network, no keys.",
    capabilities: {
      streaming: true,
      background: false,
      resume: true,
      cancel: true,
      followUps: false,
      tools: ["web_search"],
      pollOnly: false,
    },
    limits: { maxDurationMs: 900_000 },
    pricing: {
      inputPerM: 0,
      outputPerM: 0,
      typicalJobUSD: {
        low: 0,
        high: 0,
        verified: true,
        basis: "offline: a scripted model over a bundled corpus, nothing is billed",
      },
      verified: true,
      notes: "Runs locally against scripted responses; there is nothing to pay for.",
    },
    lifecycle: { stage: "ga" },
  },
];
