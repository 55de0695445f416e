export { defaultBaseURL, openrouterAdapter } from "./adapter.js";
