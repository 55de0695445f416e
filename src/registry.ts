/**
 * The one place the core meets concrete engines: each provider folder exports one
 * adapter, wired in here. (Rule of the house: nothing else in src/ imports providers/.)
 */
import { geminiAdapter } from "../providers/gemini/index.js";
import { hostedAdapter } from "../providers/hosted/index.js";
import { openaiAdapter } from "../providers/openai/index.js";
import { openrouterAdapter } from "../providers/openrouter/index.js";
import { perplexityAdapter } from "../providers/perplexity/index.js";
import { portableAdapter } from "../providers/portable/index.js";
import type { ProviderName } from "./events.js";
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
  gemini: geminiAdapter,
  hosted: hostedAdapter,
  openai: openaiAdapter,
  openrouter: openrouterAdapter,
  perplexity: perplexityAdapter,
  portable: portableAdapter,
};
