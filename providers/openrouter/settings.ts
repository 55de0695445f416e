import { z } from "zod";
import { lazySchema } from "../../src/lazy-schema.js";
import { shapeSettings } from "../../src/plain-settings.js";
import { engineSettingsShape } from "../../src/settings.js";

/** `new Sonde({ openrouter })`: the key and endpoint, and OpenRouter's app attribution. */
export const openrouterSettingsSchema = shapeSettings(
  lazySchema(() =>
    z.strictObject({
      ...engineSettingsShape,
      /** Sent as `X-Title` (OpenRouter's app attribution). */
      appName: z.string().optional(),
      /** Sent as `HTTP-Referer`. */
      appUrl: z.string().optional(),
    }),
  ),
);

export type OpenRouterSettings = z.input<typeof openrouterSettingsSchema>;
