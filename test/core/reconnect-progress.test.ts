/**
 * What counts as progress for the reconnect budget. A connection that maps something new at a
 * cursor starts the next one at once with a fresh budget; one that brought only repeats,
 * cursorless events or notices that map to nothing counts against `retry.attempts` and waits
 * its backoff first, as a failed connect does. Before, any event the dedup called new reset
 * the budget, so a server answering each reconnection with one cursorless event and a drop
 * was reconnected to hundreds of times a second until the job's timeout.
 */
import { describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/events.js";
import { collectEvents, fakeJob } from "../helpers/fake-engine.js";
import { at, type Step, scripted } from "../helpers/scripted-engine.js";

const opening: Step[] = [at("0", "created"), at("1", "t:a "), "drop"];
const retry = { attempts: 3, minDelayMs: 1, maxDelayMs: 2 };
const texts = (events: ResearchEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.delta] : []));

describe("reconnections that get nowhere count against the retry budget", () => {
  const nowhere: [string, boolean, (n: number) => Step[]][] = [
    ["one cursorless event, then a drop (ranked)", true, () => [at(undefined, "running"), "drop"]],
    ["one cursorless event, then a drop (opaque)", false, () => [at(undefined, "running"), "drop"]],
    ["one cursorless event, then a clean end", true, () => [at(undefined, "running")]],
    [
      "a new notice cursor that maps to nothing, then repeats and a drop",
      false,
      (n) => [[at(`notice-${n}`, ""), at("1", "t:a ")], "drop"],
    ],
  ];
  for (const [name, ranked, plan] of nowhere)
    it(`${name}: ends incomplete after retry.attempts of them, attachable`, async () => {
      const session = scripted((n) => (n === 0 ? opening : plan(n)), { ranked });
      const events = await collectEvents(fakeJob(session, { retry }));
      // The first connection made progress (its drop reconnects at once), then 3 stalls are retried.
      expect(session.connects).toHaveLength(1 + 1 + retry.attempts);
      expect(texts(events)).toEqual(["a "]);
      expect(events.filter((e) => e.type === "error")).toEqual([
        expect.objectContaining({
          error: expect.objectContaining({ code: "stream_interrupted", retryable: true }),
        }),
      ]);
      expect(events.at(-1)).toMatchObject({ type: "done", status: "incomplete" });
    });

  it("each of them waits the policy's backoff first; a reconnection after progress does not", async () => {
    const waits = { attempts: 3, minDelayMs: 60, maxDelayMs: 60 };
    const session = scripted((n) => (n === 0 ? opening : [at(undefined, "running"), "drop"]), {
      ranked: true,
    });
    const times: number[] = [];
    const connect = session.connect.bind(session);
    session.connect = (options) => {
      times.push(performance.now());
      return connect(options);
    };
    await collectEvents(fakeJob(session, { retry: waits }));
    const gaps = times.slice(1).map((time, i) => time - times[i]!);
    expect(gaps[0]).toBeLessThan(30);
    // Full jitter over a 60 ms ceiling: at least 30 ms before each stalled reconnection.
    for (const gap of gaps.slice(1, 1 + waits.attempts)) expect(gap).toBeGreaterThanOrEqual(29);
  });

  it("progress resets the budget: a drop after every two new events, many more times than attempts, completes", async () => {
    const wires = [
      at("0", "created"),
      ...Array.from({ length: 24 }, (_, i) => at(String(i + 1), `t:w${i} `)),
    ];
    wires.push(at("25", "done"));
    const session = scripted(
      (n) => {
        const from = n === 0 ? 0 : 1 + 2 * n;
        const read = wires.slice(from, from + 2 + (n === 0 ? 1 : 0));
        return from + read.length >= wires.length ? read : [...read, "drop"];
      },
      { ranked: true },
    );
    const events = await collectEvents(fakeJob(session, { retry }));
    expect(session.connects.length).toBeGreaterThan(retry.attempts + 2);
    expect(texts(events)).toEqual(Array.from({ length: 24 }, (_, i) => `w${i} `));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("ranked cursors: new events that map to nothing (reasoning, thinking off) are progress", async () => {
    // A long quiet phase of a stream whose connections drop more often than retry.attempts:
    // each brings new sequence numbers, so the job goes on to its report.
    const quiet = Array.from({ length: 12 }, (_, i) => at(String(i + 2), ""));
    const session = scripted(
      (n) =>
        n === 0
          ? opening
          : n <= quiet.length
            ? [quiet[n - 1]!, "drop"]
            : [at(String(quiet.length + 2), "t:b "), at(String(quiet.length + 3), "done")],
      { ranked: true },
    );
    const events = await collectEvents(fakeJob(session, { retry }));
    expect(session.connects.length).toBeGreaterThan(retry.attempts + 2);
    expect(texts(events)).toEqual(["a ", "b "]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("a poll-only job's cursorless snapshots are progress (its session backs off between polls itself)", async () => {
    const session = scripted(
      (n) =>
        n === 0
          ? [at("0", "created"), "drop"]
          : n < 8
            ? [at(undefined, "running"), "drop"]
            : [at("f", "done")],
      { ranked: false },
    );
    const events = await collectEvents(fakeJob(session, { retry, pollOnly: true }));
    expect(session.connects).toHaveLength(9);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });
});
