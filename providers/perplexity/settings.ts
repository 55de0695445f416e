import { z } from "zod";
import { lazySchema } from "../../src/lazy-schema.js";
import { shapeSettings } from "../../src/plain-settings.js";
import { engineSettingsShape, timerMs } from "../../src/settings.js";

/** `new Sonde({ perplexity })`: the key and endpoint, and how the Agent API is called. */
export const perplexitySettingsSchema = shapeSettings(
  lazySchema(() =>
    z.strictObject({
      ...engineSettingsShape,
      /**
       * The request field that names the preset. Later docs call it `effort`; whether `preset`
       * stays accepted is unconfirmed. @defaultValue "preset"
       */
      presetField: z.enum(["preset", "effort"]).optional(),
      /** The Agent API path; `"v1/responses"` is its documented alias. @defaultValue "v1/agent" */
      agentPath: z.string().regex(/\S/, 'must be a path such as "v1/agent" or "v1/responses"').optional(),
      /** `false`: submit and poll, no stream. @defaultValue true */
      stream: z.boolean().optional(),
      /** How long `cancel()` polls for `cancelled` after the cancel is acknowledged. @defaultValue 30_000 */
      cancelWaitMs: timerMs().optional(),
    }),
  ),
);

export type PerplexitySettings = z.input<typeof perplexitySettingsSchema>;
