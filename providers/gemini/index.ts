/**
 * `sonde/providers/gemini`: Gemini Deep Research agents (Interactions API) as a Sonde engine.
 */
export { geminiAdapter } from "./adapter.js";
export { type GeminiSettings, geminiSettingsSchema } from "./settings.js";
export { API_REVISION } from "./wire.js";
