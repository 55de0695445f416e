export { defaultAsyncPath, defaultBaseURL, perplexityAdapter } from "./adapter.js";
