/**
 * The entry Node, Bun and Deno run: the package's main entry (`new Sonde()`, every engine)
 * and `sonde/testing`, resolved from node_modules like a user's app. Prints one JSON line.
 */
import { Sonde } from "sonde";
import { clearMocks, mockResearch } from "sonde/testing";
import { runCases } from "./cases.js";

declare const Deno: { args: string[] } | undefined;
const [runtime = "", base = ""] = typeof Deno !== "undefined" ? Deno.args : process.argv.slice(2);
const results = await runCases({
  runtime,
  base,
  client: (options) => new Sonde(options),
  mockResearch,
  clearMocks,
});
console.log(JSON.stringify(results));
