import { z } from "zod";
import { lazySchema } from "../../src/lazy-schema.js";
import { shapeSettings } from "../../src/plain-settings.js";
import { engineSettingsShape } from "../../src/settings.js";

/** `new Sonde({ openai })`: the key and endpoint, and the headers that pick an organization and project. */
export const openaiSettingsSchema = shapeSettings(
  lazySchema(() =>
    z.strictObject({
      ...engineSettingsShape,
      /** Sent as `OpenAI-Organization`. */
      organization: z.string().optional(),
      /** Sent as `OpenAI-Project`. */
      project: z.string().optional(),
    }),
  ),
);

export type OpenAISettings = z.input<typeof openaiSettingsSchema>;
