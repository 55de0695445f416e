export { defaultBaseURL, openrouterAdapter } from "./adapter.js";
export { type OpenRouterSettings, openrouterSettingsSchema } from "./settings.js";
