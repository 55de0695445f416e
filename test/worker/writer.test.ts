import { describe, expect, it } from "vitest";
import { appendRetrying, type EncodedBatch } from "../../src/redis/events.js";
import { type Batch, EventWriter } from "../../src/worker/writer.js";

const text = (seq: number) => JSON.stringify({ type: "text", seq, delta: `w${seq} ` });
/** Pushes event `seq` (its stored JSON) with `ref`. */
const push = (writer: EventWriter, seq: number, ref?: unknown) => writer.push(seq, text(seq), ref);
const seqsOf = (batch: Batch) => Array.from({ length: batch.count }, (_, i) => batch.first + i);

/** A writer whose first write waits until `release()` is called: a write in flight, held open. */
function heldWriter(intervalMs?: number) {
  const writes: number[][] = [];
  let open: () => void = () => {};
  const writer = new EventWriter(async (batch) => {
    writes.push(seqsOf(batch));
    if (writes.length === 1) await new Promise<void>((resolve) => (open = resolve));
  }, intervalMs);
  return { writer, writes, release: () => open() };
}

describe("the worker's event writer", () => {
  it("gathers a burst into one write, in seq order, with the ref of its last event; flush does not linger", async () => {
    const writes: Batch[] = [];
    const writer = new EventWriter(async (batch) => {
      writes.push(batch);
    }, 60_000);
    for (let seq = 0; seq < 10; seq++) push(writer, seq, { cursor: String(seq) });
    await writer.flush(); // would hang for a minute if flush waited for the linger
    expect(writes).toHaveLength(1);
    expect(seqsOf(writes[0]!)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(JSON.parse(`[${writes[0]!.joined}]`)[3]).toEqual(JSON.parse(text(3)));
    expect(writes[0]!.ref).toEqual({ cursor: "9" });
  });

  it("one write in flight: what arrives meanwhile goes in the next one, never ahead of it", async () => {
    const { writer, writes, release } = heldWriter();
    push(writer, 0);
    await new Promise((resolve) => setImmediate(resolve));
    for (let seq = 1; seq < 5; seq++) push(writer, seq);
    expect(writes).toEqual([[0]]);
    release();
    await writer.flush();
    expect(writes).toEqual([[0], [1, 2, 3, 4]]);
  });

  it("an idle writer writes at once, without a linger, and a burst of one turn goes in one write", async () => {
    const writes: number[][] = [];
    const writer = new EventWriter(async (batch) => {
      writes.push(seqsOf(batch));
    });
    // The events one chunk of a stream yields arrive in one turn of the event loop.
    for (let seq = 0; seq < 10; seq++) push(writer, seq);
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
      writes.push(seqsOf(batch));
    }, 40);
    push(writer, 0);
    await turn();
    await turn();
    expect(writes).toEqual([[0]]);
    // Right after a write: gathered until the interval is over.
    push(writer, 1);
    push(writer, 2);
    await turn();
    await turn();
    expect(writes).toEqual([[0]]);
    await writer.flush();
    expect(writes).toEqual([[0], [1, 2]]);
    // After a quiet spell longer than the interval, an isolated event goes out in the same turn.
    await new Promise((resolve) => setTimeout(resolve, 60));
    push(writer, 3);
    await turn();
    await turn();
    expect(writes).toEqual([[0], [1, 2], [3]]);
  });

  it("a flush hurries what was pushed before it, not what comes while its write is in flight", async () => {
    const { writer, writes, release } = heldWriter(60_000);
    push(writer, 0);
    const flushed = writer.flush();
    await new Promise((resolve) => setImmediate(resolve));
    push(writer, 1);
    release();
    await flushed;
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Seq 1 waits out the interval (or the next flush), as it would without the first flush.
    expect(writes).toEqual([[0]]);
    await writer.flush();
    expect(writes).toEqual([[0], [1]]);
  });

  it("a failed write fails flush and every later push: the run stops instead of dropping events", async () => {
    const writer = new EventWriter(async () => {
      throw new Error("Redis is down");
    });
    push(writer, 0);
    await expect(writer.flush()).rejects.toThrow("Redis is down");
    expect(() => push(writer, 1)).toThrow("Redis is down");
  });

  it("rest() waits for the write in flight, then hands over the unwritten events and writes nothing more", async () => {
    const { writer, writes, release } = heldWriter(60_000);
    push(writer, 0, "r0");
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([[0]]);
    // In flight: these wait for the interval, and then for rest() to take them.
    push(writer, 1, "r1");
    push(writer, 2, "r2");
    let handed: Batch | undefined;
    const resting = writer.rest().then((batch) => {
      handed = batch;
    });
    await new Promise((resolve) => setImmediate(resolve));
    // Not before the write in flight is over: the final step must never overtake it.
    expect(handed).toBeUndefined();
    release();
    await resting;
    expect(handed && { seqs: seqsOf(handed), ref: handed.ref }).toEqual({ seqs: [1, 2], ref: "r2" });
    expect(writes).toEqual([[0]]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(writes).toEqual([[0]]);
    expect(() => push(writer, 3)).toThrow("after rest()");
  });

  it("takes only consecutive seqs, and keeps `created` with its batch", async () => {
    const writes: Batch[] = [];
    const writer = new EventWriter(async (batch) => {
      writes.push(batch);
    });
    writer.push(4, text(4), undefined);
    expect(() => writer.push(6, text(6), undefined)).toThrow("does not follow 4");
    writer.push(5, text(5), "ref", "resp_1");
    await writer.flush();
    expect(writes.map((b) => ({ first: b.first, created: b.created }))).toEqual([
      { first: 4, created: "resp_1" },
    ]);
    push(writer, 6);
    await writer.flush();
    expect(writes[1]!.created).toBeUndefined();
  });
});

describe("sending a batch again past the stored end", () => {
  it("sends exactly the events after the seq the script says is stored, byte for byte", async () => {
    const texts = [0, 1, 2, 3].map((seq) =>
      JSON.stringify({
        type: "text",
        seq: 10 + seq,
        delta: `é "q" \\ \u2028 👩‍🔬 ${seq}`,
        cursor: String(seq),
      }),
    );
    const sent: EncodedBatch[] = [];
    await appendRetrying(texts.join(","), 4, 10, async (batch) => {
      sent.push(batch);
      return sent.length === 1 ? [-1, 11] : [2, 0];
    });
    expect(sent.map(({ first, last, count }) => ({ first, last, count }))).toEqual([
      { first: 10, last: 13, count: 4 },
      { first: 12, last: 13, count: 2 },
    ]);
    expect(sent[1]!.blob).toBe(`[${texts[2]},${texts[3]}]`);
  });
});
