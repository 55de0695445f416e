/**
 * The entry workerd runs, bundled as a Workers app would be: `createSonde` from
 * `sonde/core` with the engines the cases use, and `sonde/testing`. One request runs
 * every case; the fakes' address comes in the query string.
 */
import { createSonde } from "sonde/core";
import { geminiAdapter } from "sonde/providers/gemini";
import { hostedAdapter } from "sonde/providers/hosted";
import { openaiAdapter } from "sonde/providers/openai";
import { openrouterAdapter } from "sonde/providers/openrouter";
import { perplexityAdapter } from "sonde/providers/perplexity";
import { clearMocks, mockResearch } from "sonde/testing";
import { runCases } from "./cases.js";

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const results = await runCases({
      runtime: url.searchParams.get("runtime") ?? "",
      base: url.searchParams.get("base") ?? "",
      client: (options) =>
        createSonde({
          adapters: [openaiAdapter, geminiAdapter, hostedAdapter, openrouterAdapter, perplexityAdapter],
          ...options,
        }),
      mockResearch,
      clearMocks,
    });
    return Response.json(results);
  },
};
