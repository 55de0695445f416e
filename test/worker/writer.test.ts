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
    await new Promise((resolve) => setImmediate(resolve));
    for (let seq = 1; seq < 5; seq++) writer.push(text(seq), undefined);
    expect(writes).toEqual([[0]]);
    release();
    await writer.flush();
    expect(writes).toEqual([[0], [1, 2, 3, 4]]);
  });

  it("an idle writer writes at once, without a linger, and a burst of one turn goes in one write", async () => {
    const writes: number[][] = [];
    const writer = new EventWriter(async (batch) => {
      writes.push(batch.events.map((e) => e.seq));
    });
    // The events one chunk of a stream yields arrive in one turn of the event loop.
    for (let seq = 0; seq < 10; seq++) writer.push(text(seq), undefined);
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // Written without flush() and without any timer: one write for the burst.
    expect(writes).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
  });

  it("writes at most once per interval: an event after a quiet spell at once, a burst after a write gathered, flush skips the wait", async () => {
    const writes: number[][] = [];
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const writer = new EventWriter(async (batch) => {
      writes.push(batch.events.map((e) => e.seq));
    }, 40);
    writer.push(text(0), undefined);
    await turn();
    await turn();
    expect(writes).toEqual([[0]]);
    // Right after a write: gathered until the interval is over.
    writer.push(text(1), undefined);
    writer.push(text(2), undefined);
    await turn();
    await turn();
    expect(writes).toEqual([[0]]);
    await writer.flush();
    expect(writes).toEqual([[0], [1, 2]]);
    // After a quiet spell longer than the interval, an isolated event goes out in the same turn.
    await new Promise((resolve) => setTimeout(resolve, 60));
    writer.push(text(3), undefined);
    await turn();
    await turn();
    expect(writes).toEqual([[0], [1, 2], [3]]);
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
