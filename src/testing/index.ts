/**
 * `sonde/testing`: test your app without a provider. `mockResearch` scripts jobs
 * through the real job machinery. Needs nothing beyond sonde and zod; the msw
 * handlers that speak each provider's wire format live in `sonde/testing/msw`.
 */

export {
  clearMocks,
  type MockBuilder,
  type MockHandle,
  type MockOptions,
  mockResearch,
  type ScriptedEvent,
} from "./mock.js";
