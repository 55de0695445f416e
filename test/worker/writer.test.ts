import { describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/index.js";
import { type Batch, EventWriter } from "../../src/worker/writer.js";

const text = (seq: number) => ({ type: "text", seq, delta: `w${seq} ` }) as ResearchEvent;

describe("the worker's event writer", () => {
  it("gathers a burst into one write, in seq order, with the ref of its last event; flush does not linger", async () => {
    const writes: Batch[] = [];
    const writer = new EventWriter(async (batch) => {
      writes.push(batch);
    }, 60_000);
    for (let seq = 0; seq < 10; seq++) writer.push(text(seq), { cursor: String(seq) });
    await writer.flush(); // would hang for a minute if flush waited for the linger
    expect(writes).toHaveLength(1);
    expect(writes[0]!.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(writes[0]!.ref).toEqual({ cursor: "9" });
  });

  it("one write in flight: what arrives meanwhile goes in the next one, never ahead of it", async () => {
    const writes: number[][] = [];
    let release: () => void = () => {};
    const writer = new EventWriter(async (batch) => {
      writes.push(batch.events.map((e) => e.seq));
      if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    writer.push(text(0), undefined);
    await Promise.resolve();
    for (let seq = 1; seq < 5; seq++) writer.push(text(seq), undefined);
    expect(writes).toEqual([[0]]);
    release();
    await writer.flush();
    expect(writes).toEqual([[0], [1, 2, 3, 4]]);
  });

  it("a failed write fails flush and every later push: the run stops instead of dropping events", async () => {
    const writer = new EventWriter(async () => {
      throw new Error("Redis is down");
    });
    writer.push(text(0), undefined);
    await expect(writer.flush()).rejects.toThrow("Redis is down");
    expect(() => writer.push(text(1), undefined)).toThrow("Redis is down");
  });
});
