/** The OpenRouter engine's synchronous part (src/lazy-engine.ts): catalog, options, request checks. */
import { openrouter } from "../../catalog/openrouter.js";
import { UnsupportedOptionError } from "../../src/errors.js";
import type { EngineSpec } from "../../src/lazy-engine.js";
import { specVersion } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { openrouterSettingsSchema } from "./settings.js";

/** An OpenRouter run is one streamed request: it cannot be followed again. */
export function refuseAttach(ref: JobRef): never {
  throw new UnsupportedOptionError(
    "attach",
    `openrouter: job ${ref.jobId} cannot be re-attached. An OpenRouter run is a single streamed HTTP request ` +
      "with no resume: once that connection is gone its events cannot be fetched again. The run may still have " +
      "finished and billed upstream; research.get(ref) reads its recorded cost and token counts. Start a new job to get a report.",
    { provider: "openrouter" },
  );
}

export const openrouterSpec: EngineSpec = {
  specVersion,
  models: openrouter,
  provider: "openrouter",
  settingsSchema: openrouterSettingsSchema,
  supports: ["instructions", "asOf", "output", "reasoning"],

  validate(request) {
    if (request.reasoning?.summary !== undefined)
      throw new UnsupportedOptionError(
        "reasoning",
        `${request.modelInfo.id} streams its reasoning as is; OpenRouter has no reasoning summaries. Drop reasoning.summary (reasoning.includeThinking is supported).`,
      );
  },

  // No resume: a drop ends the job (the core never reconnects it).
  session: { resumable: false },
  checkAttach: refuseAttach,
};
