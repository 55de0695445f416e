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

export const adapters: Partial<Record<ProviderName, ResearchAdapter>> = {
  gemini: geminiAdapter,
  hosted: hostedAdapter,
  openai: openaiAdapter,
  openrouter: openrouterAdapter,
  perplexity: perplexityAdapter,
  portable: portableAdapter,
};
