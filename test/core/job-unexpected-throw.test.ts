/**
 * A throw the job machinery did not expect (here a clock that fails, as a broken
 * integration would) still settles result() and created(): the caller gets the error, not a
 * promise that never settles.
 */
import { describe, expect, it } from "vitest";
import { findModel } from "../../catalog/index.js";
import { ResearchJob } from "../../src/job.js";
import { fakeSession, script } from "../helpers/fake-engine.js";

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe("an unexpected throw inside a job", () => {
  it.each(["result", "iteration", "created()"])("rejects result() with it, driven by %s", async (driver) => {
    const job = new ResearchJob({
      provider: "openai",
      model: "openai:o4-mini-deep-research",
      pricing: findModel("openai:o4-mini-deep-research")!.pricing,
      retry: { attempts: 1, minDelayMs: 1, maxDelayMs: 2 },
      logger: silent,
      clock: () => {
        throw new TypeError("clock is broken");
      },
      timeoutMs: 60_000,
      cancel: async () => ({ outcome: "cancelled" }),
      session: fakeSession({ events: script(3) }),
    });
    if (driver === "iteration")
      await expect(
        (async () => {
          for await (const _ of job);
        })(),
      ).rejects.toThrow("clock is broken");
    if (driver === "created()") {
      // Before, created() never settled: its pull failed, and nothing rejected the job.
      const created = await Promise.race([
        job.created().then(
          () => "resolved",
          (error: unknown) => (error as Error).message,
        ),
        new Promise((resolve) => setTimeout(() => resolve("still pending"), 2_000)),
      ]);
      expect(created).toBe("clock is broken");
    }
    const settled = await Promise.race([
      job.result().then(
        () => "resolved",
        (error: unknown) => (error as Error).message,
      ),
      new Promise((resolve) => setTimeout(() => resolve("still pending"), 2_000)),
    ]);
    expect(settled).toBe("clock is broken");
  });
});
