/**
 * `fetch` and `clock` given as something other than a function (plain JavaScript: a Date for
 * `clock`) are refused when the client is made. Before, a job's result() never settled with
 * such a clock, and such a fetch was reported as a submission that "may have started and billed".
 */
import { describe, expect, it } from "vitest";
import { InvalidRequestError, Sonde } from "../../src/index.js";

describe("client options that must be functions", () => {
  it.each([
    ["clock", new Date()],
    ["clock", "now"],
    ["fetch", 42],
  ])("%s: %j is an InvalidRequestError naming the option", (key, value) => {
    const make = () => new Sonde({ env: {}, [key]: value } as never);
    expect(make).toThrow(InvalidRequestError);
    expect(make).toThrow(new RegExp(`"${key}" must be a function`));
  });

  it("functions are accepted as before", () => {
    expect(() => new Sonde({ env: {}, clock: () => new Date(), fetch: globalThis.fetch })).not.toThrow();
  });
});
