/**
 * `fetch` and `clock` given as something other than a function (plain JavaScript: a Date for
 * `clock`) are refused when the client is made. Before, a job's result() never settled with
 * such a clock, and such a fetch was reported as a submission that "may have started and billed".
 * So are number options out of range (`idleTimeoutMs`, `retry`), which a job would otherwise
 * read as "time out at once", "never retry" or a backoff that cannot be computed.
 */
import { describe, expect, it } from "vitest";
import { createSonde, InvalidRequestError, Sonde } from "../../src/index.js";

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

describe("number options out of range", () => {
  it.each([
    [{ idleTimeoutMs: 0 }, "idleTimeoutMs", /a finite number of milliseconds above 0; got 0\./],
    [{ idleTimeoutMs: -1 }, "idleTimeoutMs", /got -1\./],
    [{ idleTimeoutMs: Number.NaN }, "idleTimeoutMs", /got NaN\./],
    [{ idleTimeoutMs: Number.POSITIVE_INFINITY }, "idleTimeoutMs", /got Infinity\./],
    [{ idleTimeoutMs: "5000" }, "idleTimeoutMs", /got "5000"\./],
    [{ retry: { attempts: -1 } }, "retry.attempts", /a whole number from 0 \(0: no retries\); got -1\./],
    [{ retry: { attempts: 2.5 } }, "retry.attempts", /got 2\.5\./],
    [{ retry: { minDelayMs: -5 } }, "retry.minDelayMs", /a finite number of milliseconds from 0; got -5\./],
    [{ retry: { maxDelayMs: Number.POSITIVE_INFINITY } }, "retry.maxDelayMs", /got Infinity\./],
    [
      { retry: { minDelayMs: 10, maxDelayMs: 5 } },
      "retry.minDelayMs",
      /at most retry\.maxDelayMs \(5\); got 10\./,
    ],
    // Against the default maxDelayMs (30 s) when only minDelayMs is given.
    [
      { retry: { minDelayMs: 60_000 } },
      "retry.minDelayMs",
      /at most retry\.maxDelayMs \(30000\); got 60000\./,
    ],
  ])("%j is an InvalidRequestError naming %s and what it takes", (options, field, detail) => {
    const make = () => new Sonde({ env: {}, ...options } as never);
    expect(make).toThrow(InvalidRequestError);
    expect(make).toThrow(`Client option "${field}" takes `);
    expect(make).toThrow(detail);
  });

  it("a wait longer than a timer can hold is refused: it would fire at once", () => {
    // Above 2^31 - 1 ms, setTimeout waits 1 ms: with such an idleTimeoutMs, a Perplexity (or
    // hosted, or OpenRouter) submission was cut 1 ms after it was sent and reported as
    // indeterminate ("may have started and billed"), and every stream's watchdog spun.
    const longest = 2 ** 31 - 1;
    for (const [options, field] of [
      [{ idleTimeoutMs: 2 ** 31 }, "idleTimeoutMs"],
      [{ idleTimeoutMs: Number.MAX_SAFE_INTEGER }, "idleTimeoutMs"],
      [{ retry: { maxDelayMs: 2 ** 31 } }, "retry.maxDelayMs"],
    ] as const) {
      const make = () => new Sonde({ env: {}, ...options });
      expect(make).toThrow(InvalidRequestError);
      expect(make).toThrow(`Client option "${field}" takes `);
      expect(make).toThrow(/at most 2147483647/);
    }
    expect(
      () => new Sonde({ env: {}, idleTimeoutMs: longest, retry: { maxDelayMs: longest } }),
    ).not.toThrow();
  });

  it("an engine's own waits longer than a timer can hold are refused too", async () => {
    for (const [options, field] of [
      [{ perplexity: { cancelWaitMs: 2 ** 31 } }, "perplexity.cancelWaitMs"],
      [{ hosted: { cancelWaitMs: 2 ** 31 } }, "hosted.cancelWaitMs"],
    ] as const) {
      const make = () => new Sonde({ env: {}, ...options });
      expect(make).toThrow(InvalidRequestError);
      expect(make).toThrow(field);
      expect(make).toThrow(/2147483647/);
    }
    // The portable engine's options are checked when one of its jobs starts.
    const portable = (leaseMs: number) =>
      new Sonde({ env: {}, portable: { leaseMs } }).research.start({
        model: "portable:demo/offline",
        query: "q",
      });
    expect(() => portable(2 ** 31)).toThrow(/portable\.leaseMs must be an integer from 100 to 2147483647/);
    expect(
      () =>
        new Sonde({
          env: {},
          perplexity: { cancelWaitMs: 2 ** 31 - 1 },
          hosted: { cancelWaitMs: 2 ** 31 - 1 },
        }),
    ).not.toThrow();
    // The longest lease a timer can hold runs the job to its end.
    expect((await portable(2 ** 31 - 1).result()).jobId).toBeDefined();
  });

  it("values in range are accepted, retries off and equal delays included", () => {
    for (const options of [
      { idleTimeoutMs: 1 },
      { retry: { attempts: 0 } },
      { retry: { attempts: 3, minDelayMs: 0, maxDelayMs: 0 } },
      { retry: { minDelayMs: 60_000, maxDelayMs: 60_000 } },
    ])
      expect(() => new Sonde({ env: {}, ...options })).not.toThrow();
  });

  it("a value left undefined takes its default, as a missing one does", () => {
    // `Partial<RetryPolicy>` allows it, and every other option reads undefined as not given:
    // before, `retry: { attempts: undefined }` replaced the default and was refused.
    for (const options of [
      { idleTimeoutMs: undefined },
      { retry: { attempts: undefined } },
      { retry: { minDelayMs: undefined, maxDelayMs: undefined } },
      { retry: { attempts: 2, maxDelayMs: undefined } },
    ])
      expect(() => new Sonde({ env: {}, ...options })).not.toThrow();
  });

  it("createSonde checks them the same way", () => {
    expect(() => createSonde({ adapters: [], env: {}, retry: { attempts: -2 } })).toThrow(
      /Client option "retry\.attempts" takes a whole number/,
    );
  });
});
