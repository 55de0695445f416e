/** The hosted job API's synchronous part (src/lazy-engine.ts): catalog, options, config checks. */
import { hosted } from "../../catalog/hosted.js";
import { InvalidRequestError } from "../../src/errors.js";
import type { EngineSpec } from "../../src/lazy-engine.js";
import { type ProviderContext, specVersion } from "../../src/provider.js";
import { hostedSettingsSchema } from "./settings.js";

/** Every hosted call needs the service's base URL: none is built in. */
export function requireBaseURL(context: Pick<ProviderContext, "settings">): void {
  if (!context.settings.baseURL)
    throw new InvalidRequestError(
      "No base URL for the hosted job API: set SONDE_HOSTED_BASE_URL or pass { hosted: { baseURL } } to new Sonde().",
      { provider: "hosted" },
    );
}

export const hostedSpec: EngineSpec = {
  specVersion,
  models: hosted,
  provider: "hosted",
  settingsSchema: hostedSettingsSchema,
  // The service takes a prompt only: files, documents, provider tools, metadata and result
  // limits are not in `supports`, so the core rejects them before anything is sent or billed.
  supports: ["instructions", "asOf", "output"],
  checkConfig: requireBaseURL,
  session: { resumable: true },
  checkStart: (_, context) => requireBaseURL(context),
  checkAttach: (_, context) => requireBaseURL(context),
};
