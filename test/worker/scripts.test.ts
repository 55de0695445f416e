/// <reference path="../../src/redis/lua.d.ts" />
/**
 * The worker's Lua steps on a real Redis, where an ordering or an all-or-nothing write is a
 * guarantee: a batch that straddles the stored end writes nothing at all (so sending again
 * what is past the end stores every event once), the final step writes the events, `done`,
 * the result, the status and the end's entry together, and a run marks a submission in its
 * first step only for a job never submitted, of an engine without a fleet limit.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBatch } from "../../src/redis/events.js";
import { luaScript, withAppendBatch } from "../../src/redis/scripts.js";
import beginRunSource from "../../src/worker/commands/begin-run.lua";
import finishRunSource from "../../src/worker/commands/finish-run.lua";
import writeEventsSource from "../../src/worker/commands/write-events.lua";
import { hashOf, STATE_FIELDS, withFinalStatuses } from "../../src/worker/state.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const writeEvents = luaScript(withFinalStatuses(withAppendBatch(writeEventsSource)));
const finishRun = luaScript(withFinalStatuses(withAppendBatch(finishRunSource)));
const beginRun = luaScript(withFinalStatuses(beginRunSource));

const texts = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) =>
    JSON.stringify({ type: "text", seq: from + i, delta: "é" }),
  );
const args = (first: number, to: number) => {
  const b = encodeBatch(texts(first, to), first);
  return [b.first, b.last, b.count, b.blob];
};

describe("the worker's steps in Redis", () => {
  it("a write that straddles the stored end writes nothing, not even the ref or the provider binding", async () => {
    const db = redis.client();
    const keys = ["s1:events", "s1:job", "s1:byjob"];
    expect(await writeEvents(db, keys.slice(0, 2), [60_000, '"r4"', ...args(0, 4)])).toEqual([5, 0, 0]);
    // Seqs 3..6: 3 and 4 are stored (a worker that was taken over wrote them first).
    expect(await writeEvents(db, keys, [60_000, '"r6"', ...args(3, 6), "rj_1", 60_000])).toEqual([-1, 4, 0]);
    expect(await db.hget("s1:job", "ref")).toBe('"r4"');
    expect(await db.exists("s1:byjob")).toBe(0);
    expect(await writeEvents(db, keys, [60_000, '"r6"', ...args(5, 6), "rj_1", 60_000])).toEqual([2, 0, 0]);
    // All stored before: nothing new, nothing written. Each write says whether a cancel is stored.
    await db.hset("s1:job", "cancelRequestedAt", "now");
    expect(await writeEvents(db, keys, [60_000, '"r9"', ...args(2, 6), "rj_1", 60_000])).toEqual([0, 0, 1]);
    expect(await db.hget("s1:job", "ref")).toBe('"r6"');
    expect(await db.get("s1:byjob")).toBe("rj_1");
    const entries = await db.xrange("s1:events", "-", "+");
    expect(entries.map(([id]) => id)).toEqual(["0-5", "0-7"]);
    expect(JSON.parse(entries[1]![1][1]!)).toEqual(texts(5, 6).map((t) => JSON.parse(t)));
  });

  it("a job whose status is final takes no more events and no second end: -2, nothing written", async () => {
    // What a run whose lock lapsed meets once the run that took its job over has ended it.
    const db = redis.client();
    const keys = ["s9:events", "s9:job", "s9:result", "s9:ended"];
    await db.hset("s9:job", { status: "completed", model: "openai:o3-deep-research", ref: '"r2"' });
    await writeEvents(db, ["s9:events", "s9:other"], [60_000, "", ...args(0, 2)]);
    expect(await writeEvents(db, keys.slice(0, 2), [60_000, '"r4"', ...args(3, 4)])).toEqual([-2, 0, 0]);
    const fixed = ["failed", '{"code":"x","message":"y"}', "", 60_000, 5_000, "rj_9", ...STATE_FIELDS];
    expect(await finishRun(db, keys, [60_000, '"r5"', ...args(3, 5), ...fixed])).toEqual([-2, 0]);
    expect(await db.hgetall("s9:job")).toEqual({
      status: "completed",
      model: "openai:o3-deep-research",
      ref: '"r2"',
    });
    expect((await db.xrange("s9:events", "-", "+")).map(([id]) => id)).toEqual(["0-3"]);
    expect(await db.exists("s9:result", "s9:ended")).toBe(0);
    // An indeterminate job without a ref gains the refused write's ref, and nothing else.
    await db.hset("s10:job", { status: "indeterminate", model: "openai:o3-deep-research" });
    expect(await writeEvents(db, ["s10:events", "s10:job"], [60_000, '"r1"', ...args(0, 1)])).toEqual([
      -2, 0, 0,
    ]);
    expect(await db.hgetall("s10:job")).toEqual({
      status: "indeterminate",
      model: "openai:o3-deep-research",
      ref: '"r1"',
    });
    expect(await db.exists("s10:events")).toBe(0);
    expect(await writeEvents(db, ["s10:events", "s10:job"], [60_000, '"r2"', ...args(2, 3)])).toEqual([
      -2, 0, 0,
    ]);
    expect(await db.hget("s10:job", "ref")).toBe('"r1"');
  });

  it("the final step stores the rest, done, result, status and the end's entry at once, or nothing when it straddles", async () => {
    const db = redis.client();
    const keys = ["s2:events", "s2:job", "s2:result", "s2:ended", "s2:slots"];
    await db.hset("s2:job", { status: "running", model: "openai:o3-deep-research", request: "{}" });
    await db.zadd("s2:slots", "+inf", "rj_2");
    await writeEvents(db, keys.slice(0, 2), [60_000, '"r2"', ...args(0, 2)]);
    const fixed = ["completed", "", '{"report":"R"}', 60_000, 5_000, "rj_2", ...STATE_FIELDS];
    expect(await finishRun(db, keys, [60_000, '"r5"', ...args(1, 5), ...fixed])).toEqual([-1, 2]);
    expect(await db.hget("s2:job", "status")).toBe("running");
    expect(await db.exists("s2:result", "s2:ended")).toBe(0);
    expect(await db.zscore("s2:slots", "rj_2")).toBe("inf");
    expect(await finishRun(db, keys, [60_000, '"r5"', ...args(3, 5), ...fixed])).toEqual([3, 0]);
    expect(await db.hgetall("s2:job")).toMatchObject({ status: "completed", ref: '"r5"' });
    expect(await db.get("s2:result")).toBe('{"report":"R"}');
    expect(await db.zscore("s2:slots", "rj_2")).toBeNull();
    expect(await db.pttl("s2:ended")).toBeGreaterThan(4_000);
    const [[, fields]] = (await db.xrange("s2:ended", "-", "+")) as [[string, string[]]];
    // The entry carries what a waiter returns: the result and the state as this step left it
    // (not the request, which a state does not hold).
    expect(fields!.slice(0, 4)).toEqual(["v", "1", "result", '{"report":"R"}']);
    const { request: _request, ...state } = await db.hgetall("s2:job");
    expect(hashOf(fields!, 4)).toEqual(state);
  });

  it("a run's first step marks a never-submitted job of an unlimited engine, and nothing else", async () => {
    const db = redis.client();
    const begin = async (key: string, fields: Record<string, string>) => {
      await db.del(key);
      await db.hset(key, fields);
      const [flat, , marked] = (await beginRun(
        db,
        [key, "s3:events"],
        ["2026-01-01T00:00:00Z", "1", ",hosted,"],
      )) as [string[], unknown, number];
      return { marked, before: hashOf(flat), after: await db.hgetall(key) };
    };
    const queued = {
      status: "queued",
      request: "{}",
      model: "openai:o3-deep-research",
      wakeRequestedAt: "x",
    };
    const fresh = await begin("s3:a", queued);
    expect(fresh.marked).toBe(1);
    // It answers the wake; it returns the state from before the mark.
    expect(fresh.before.submittingAt).toBeUndefined();
    expect(fresh.after).toMatchObject({ submittingAt: "2026-01-01T00:00:00Z", status: "running" });
    expect(fresh.after.wakeRequestedAt).toBeUndefined();
    for (const other of [
      { ...queued, model: "hosted:agents.deep_research" }, // takes a fleet slot first
      { ...queued, ref: "{}" }, // submitted: attaches
      { ...queued, submittingAt: "earlier" }, // maybe submitted: indeterminate
      { ...queued, cancelRequestedAt: "now" },
      { ...queued, status: "completed" },
      { ...queued, status: "deferred" },
    ]) {
      const run = await begin("s3:b", other);
      expect(run.marked, JSON.stringify(other)).toBe(0);
      expect(run.after.submittingAt, JSON.stringify(other)).toBe(
        (other as Record<string, string>).submittingAt,
      );
    }
  });
});

describe("the state a waiter is handed", () => {
  it("names every field stateOf reads (the steps read only those)", () => {
    const source = readFileSync(new URL("../../src/worker/state.ts", import.meta.url), "utf8");
    const body = source.slice(source.indexOf("export function stateOf"));
    const read = new Set([...body.slice(0, body.indexOf("\n}\n")).matchAll(/hash\.(\w+)/g)].map((m) => m[1]));
    expect([...read].sort()).toEqual([...STATE_FIELDS].sort());
  });
});
