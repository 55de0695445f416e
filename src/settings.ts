/**
 * What every managed engine's section of the client options holds (key, endpoint, rotated
 * keys), as a zod shape each provider's own settings schema extends.
 */
import { z } from "zod";

export const engineSettingsShape = {
  /** The engine's API key; defaults to its environment variable (`OPENAI_API_KEY`, …). */
  apiKey: z.string().optional(),
  /** The API's base URL, e.g. a proxy or a test server. */
  baseURL: z.string().optional(),
  /** After a key rotation: refs created with these keys still attach (see README, Refs). Never sent. */
  previousApiKeys: z.array(z.string()).optional(),
};

/** A managed engine's key and endpoint (keys default to the environment). */
export const engineSettingsSchema = z.strictObject(engineSettingsShape);

/** A managed engine's key and endpoint (keys default to the environment). */
export type EngineSettings = z.input<typeof engineSettingsSchema>;
