/**
 * The testing registry: msw handler factories, one per engine, each kept in its
 * provider folder beside the adapter it imitates (like src/registry.ts, the one
 * place this entry point meets concrete providers).
 */
import type { HttpHandler } from "msw";
import type { ProviderMockOptions } from "./provider-mock.js";

export type HandlerFactory = (options?: ProviderMockOptions) => HttpHandler[];

export const providerHandlers: Record<string, HandlerFactory> = {};
