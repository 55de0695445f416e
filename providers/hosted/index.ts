export { hostedAdapter } from "./adapter.js";
export { type HostedSettings, hostedSettingsSchema } from "./settings.js";
