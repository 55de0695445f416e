import { z } from "zod";
import { lazySchema } from "../../src/lazy-schema.js";
import { shapeSettings } from "../../src/plain-settings.js";
import { engineSettingsShape } from "../../src/settings.js";

/** `new Sonde({ gemini })`: the key (`GEMINI_API_KEY`/`GOOGLE_API_KEY`) and endpoint. */
export const geminiSettingsSchema = shapeSettings(lazySchema(() => z.strictObject(engineSettingsShape)));

export type GeminiSettings = z.input<typeof geminiSettingsSchema>;
