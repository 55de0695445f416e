/** The OpenAI engine's synchronous part (src/lazy-engine.ts): catalog, options, request checks. */
import { openai } from "../../catalog/openai.js";
import { responsesSpec } from "../../src/protocols/responses/spec.js";
import { supportedOptions, validateRequest } from "./request.js";
import { openaiSettingsSchema } from "./settings.js";

export const openaiSpec = responsesSpec({
  provider: "openai",
  models: openai,
  settingsSchema: openaiSettingsSchema,
  supports: supportedOptions,
  validate: (request) => validateRequest(request),
});
