/**
 * The testing registry: msw handler factories, one per managed engine, each kept in
 * its provider folder beside the adapter it imitates (like src/registry.ts, the one
 * place this entry point meets concrete providers). The portable engine's factory
 * imitates what it talks to: an OpenAI-compatible chat endpoint, Tavily search and pages.
 */
import type { HttpHandler } from "msw";
import { handlers as gemini } from "../../../providers/gemini/testing.js";
import { handlers as hosted } from "../../../providers/hosted/testing.js";
import { handlers as openai } from "../../../providers/openai/testing.js";
import { handlers as openrouter } from "../../../providers/openrouter/testing.js";
import { handlers as perplexity } from "../../../providers/perplexity/testing.js";
import { type PortableMockOptions, handlers as portable } from "../../../providers/portable/testing.js";
import type { ProviderMockOptions } from "../provider-mock.js";

export type HandlerFactory = (options?: ProviderMockOptions) => HttpHandler[];

/**
 * msw handlers that speak each provider's wire format: job creation, streaming or
 * polling, get and cancel. Use them with `setupServer(...providerHandlers.openai({ report }))`.
 */
export const providerHandlers: {
  openai: HandlerFactory;
  gemini: HandlerFactory;
  openrouter: HandlerFactory;
  perplexity: HandlerFactory;
  hosted: HandlerFactory;
  portable: (options?: PortableMockOptions) => HttpHandler[];
} = { openai, gemini, openrouter, perplexity, hosted, portable };
