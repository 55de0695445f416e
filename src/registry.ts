/**
 * The one place the core meets concrete engines: each provider folder exports one
 * adapter, wired in here. (Rule of the house: nothing else in src/ imports providers/.)
 * `new Sonde()` holds each engine's light spec and imports the rest of it on first use
 * (lazy-engine.ts), so `import("sonde")` loads no engine's session, mapper or wire schemas.
 */
import { geminiSpec } from "../providers/gemini/spec.js";
import { hostedSpec } from "../providers/hosted/spec.js";
import { openaiSpec } from "../providers/openai/spec.js";
import { openrouterSpec } from "../providers/openrouter/spec.js";
import { perplexitySpec } from "../providers/perplexity/spec.js";
import { portableSpec } from "../providers/portable/spec.js";
import type { ProviderName } from "./events.js";
import { lazyAdapter } from "./lazy-engine.js";
import type { ResearchAdapter } from "./provider.js";

// The settings types of the client options are each provider's own (one schema, one type);
// the core names them through here, types only, so no engine's code enters a core bundle.
export type { GeminiSettings } from "../providers/gemini/settings.js";
export type { HostedSettings } from "../providers/hosted/settings.js";
export type { OpenAISettings } from "../providers/openai/settings.js";
export type { OpenRouterSettings } from "../providers/openrouter/settings.js";
export type { PerplexitySettings } from "../providers/perplexity/settings.js";
export type { PortableSettings } from "../providers/portable/settings.js";

export const adapters: Partial<Record<ProviderName, ResearchAdapter>> = {
  gemini: lazyAdapter(geminiSpec, async () => (await import("../providers/gemini/adapter.js")).geminiAdapter),
  hosted: lazyAdapter(hostedSpec, async () => (await import("../providers/hosted/adapter.js")).hostedAdapter),
  openai: lazyAdapter(openaiSpec, async () => (await import("../providers/openai/adapter.js")).openaiAdapter),
  openrouter: lazyAdapter(
    openrouterSpec,
    async () => (await import("../providers/openrouter/adapter.js")).openrouterAdapter,
  ),
  perplexity: lazyAdapter(
    perplexitySpec,
    async () => (await import("../providers/perplexity/adapter.js")).perplexityAdapter,
  ),
  portable: lazyAdapter(
    portableSpec,
    async () => (await import("../providers/portable/adapter.js")).portableAdapter,
  ),
};
