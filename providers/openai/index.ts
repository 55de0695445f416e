/**
 * `sonde/providers/openai`: the OpenAI Responses API engine (background deep research,
 * streaming with resume, polling for poll-only models, server-side cancel).
 */
export { openaiAdapter } from "./adapter.js";
export { type OpenAISettings, openaiSettingsSchema } from "./settings.js";
