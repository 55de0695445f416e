/**
 * `sonde/testing/msw`: msw handlers that speak each provider's wire format, for tests
 * one level below `mockResearch` (your own fetch, proxies). msw is an optional peer:
 * this entry loads without it, and building a handler without it throws
 * `MissingDependencyError` naming the package to install.
 */

export type { PortableMockOptions } from "../../../providers/portable/testing.js";
export type { ProviderMockOptions } from "../provider-mock.js";
export { type HandlerFactory, providerHandlers } from "./handlers.js";
