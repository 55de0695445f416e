/**
 * `sonde/testing`: test your app without a provider. `mockResearch` scripts jobs
 * through the real job machinery; `providerHandlers` are msw handlers that speak each
 * provider's wire format, for tests one level lower (your own fetch, proxies).
 */

export type { PortableMockOptions } from "../../providers/portable/testing.js";
export { type HandlerFactory, providerHandlers } from "./handlers.js";
export {
  clearMocks,
  type MockBuilder,
  type MockHandle,
  type MockOptions,
  mockResearch,
  type ScriptedEvent,
} from "./mock.js";
export type { ProviderMockOptions } from "./provider-mock.js";
