import { SondeClient, type SondeOptions } from "./client.js";
import { adapters } from "./registry.js";

/**
 * The Sonde client with every engine. Every field is optional: keys come from the
 * environment (`OPENAI_API_KEY`, `GEMINI_API_KEY`/`GOOGLE_API_KEY`, `OPENROUTER_API_KEY`,
 * `PERPLEXITY_API_KEY`, `SONDE_HOSTED_API_KEY`/`SONDE_HOSTED_BASE_URL`). To bundle only
 * the engines you use, see `createSonde` in `sonde/core`.
 */
export class Sonde extends SondeClient {
  constructor(options: SondeOptions = {}) {
    super(options, adapters);
  }
}
