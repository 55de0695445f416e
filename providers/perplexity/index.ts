/**
 * `sonde/providers/perplexity`: Perplexity deep research on the Agent API (background
 * preset runs, streaming with resume, polling, server-side cancel).
 */
export { perplexityAdapter } from "./adapter.js";
export { defaultBaseURL } from "./http.js";
export { DEFAULT_AGENT_PATH, DEFAULT_PRESET_FIELD, type PresetField } from "./request.js";
export { type PerplexitySettings, perplexitySettingsSchema } from "./settings.js";
