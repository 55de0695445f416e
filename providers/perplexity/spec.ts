/** The Perplexity engine's synchronous part (src/lazy-engine.ts): catalog, options, request and ref checks. */
import { perplexity } from "../../catalog/perplexity.js";
import { responsesSpec } from "../../src/protocols/responses/spec.js";
import { RETIRED_MODEL, sonarRetired, supportedOptions, validateRequest } from "./request.js";
import { perplexitySettingsSchema } from "./settings.js";

export const perplexitySpec = responsesSpec({
  provider: "perplexity",
  models: perplexity,
  settingsSchema: perplexitySettingsSchema,
  supports: supportedOptions,
  validate: validateRequest,
  // A ref of the retired Sonar engine names a job the Agent API never had: say so before any request.
  checkRef(ref) {
    if (ref.model === RETIRED_MODEL) throw sonarRetired();
  },
});
