/**
 * Adapters that bend the contract in ways it allows or cannot prevent: an empty read, events a
 * wire event maps to after the terminal status, and a spend cap's cancel request that never
 * answers. Each case was a defect found by probing: a duplicated delta, a report that
 * depended on where the consumer stopped, and a job deaf to abort() and its timeout.
 */
import { describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";
import { collectEvents, fakeJob } from "../helpers/fake-engine.js";
import { at, scripted } from "../helpers/scripted-engine.js";

const texts = (events: ResearchEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.delta] : []));

describe("an empty read", () => {
  it("is not a reconnection's first read: what the real first one repeats is still looked up (opaque cursors)", async () => {
    // An engine may put a notice of the reconnection before what it repeats, in its first read
    // only; an empty array first made that read a later one, so "a " and "b " came twice.
    const all = [
      at("c", "created"),
      at("a", "t:a "),
      at("b", "t:b "),
      at("x", "t:c "),
      at("y", "t:d "),
      at("e", "done"),
    ];
    const session = scripted(
      (n) =>
        n === 0
          ? [[all[0]!, all[1]!, all[2]!], "drop"]
          : [[], [at("notice", ""), all[1]!, all[2]!, all[3]!], [all[4]!, all[5]!]],
      { ranked: false },
    );
    expect(texts(await collectEvents(fakeJob(session)))).toEqual(["a ", "b ", "c ", "d "]);
  });
});

describe("events a wire event maps to after the terminal status", () => {
  // The adapter spec: the core stops at the first terminal status. It delivered the rest of
  // that wire event, so a consumer that stopped at `completed` got another report than result().
  const plan = () => [at("0", "created"), at("1", "t:a "), at("2", "done+t:late "), at("3", "t:never ")];

  it("are not delivered, read by for await, by result() alone, or stopped at the terminal status", async () => {
    const events = await collectEvents(fakeJob(scripted(plan, { ranked: true })));
    expect(texts(events)).toEqual(["a "]);
    expect(events.map((e) => e.type).slice(-2)).toEqual(["status", "done"]);
    const alone = await fakeJob(scripted(plan, { ranked: true })).result();
    const stopped = fakeJob(scripted(plan, { ranked: true }));
    for await (const event of stopped) if (event.type === "status" && event.status === "completed") break;
    for (const result of [alone, await stopped.result()]) {
      expect(result.report).toBe("a ");
      expect(result.status).toBe("completed");
    }
  });
});

describe("a spend cap whose cancel request never answers", () => {
  const plan = () => [
    at("0", "created"),
    at("1", "t:a "),
    at("2", "cost:2"),
    at("3", "t:b "),
    at("4", "done"),
  ];
  const never = () => new Promise<never>(() => {});
  const settled = (job: ResearchJob) =>
    Promise.race([
      job.result().then(
        () => "resolved",
        (error: unknown) => (error as Error).name,
      ),
      new Promise((resolve) => setTimeout(() => resolve("pending"), 1_000)),
    ]);

  for (const read of ["for await", "result()"] as const) {
    it(`the job's timeout still ends it (${read})`, async () => {
      const job = fakeJob(scripted(plan, { ranked: true }), { maxCostUSD: 1, timeoutMs: 100, cancel: never });
      if (read === "for await") void collectEvents(job).catch(() => {});
      expect(await settled(job)).toBe("JobAbortedError");
    });

    it(`abort() still ends it (${read})`, async () => {
      const job = fakeJob(scripted(plan, { ranked: true }), { maxCostUSD: 1, cancel: never });
      if (read === "for await") void collectEvents(job).catch(() => {});
      setTimeout(() => job.abort("give up"), 50);
      expect(await settled(job)).toBe("JobAbortedError");
    });
  }
});
