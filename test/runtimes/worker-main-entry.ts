/**
 * A Workers app on the main entry: `new Sonde()` (every engine) and `sonde/testing`, bundled
 * into one module as wrangler does. One request runs every case.
 */
import { Sonde } from "sonde";
import { clearMocks, mockResearch } from "sonde/testing";
import { runCases } from "./cases.js";

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const results = await runCases({
      runtime: url.searchParams.get("runtime") ?? "",
      base: url.searchParams.get("base") ?? "",
      client: (options) => new Sonde(options),
      mockResearch,
      clearMocks,
    });
    return Response.json(results);
  },
};
