/**
 * How a result()-only Responses connection joins text deltas (src/protocols/responses/delta-run.ts):
 * runs break where the content part changes or another event comes, a run's last delta goes
 * on alone, and what a resume repeats (ranked at or below the cursor it resumed from) stays
 * single, so the core still drops it.
 */
import { describe, expect, it } from "vitest";
import { DeltaRun } from "../../src/protocols/responses/delta-run.js";
import { execTextDelta, textDeltaOf } from "../../src/protocols/responses/events.js";
import type { WireEvent } from "../../src/provider.js";

const delta = (seq: number, text: string, item = "msg_1", content = 0) =>
  execTextDelta(
    JSON.stringify({
      type: "response.output_text.delta",
      item_id: item,
      output_index: 1,
      content_index: content,
      delta: text,
      sequence_number: seq,
    }),
  )!;

/** Each handed-over wire event as cursor and text. */
const shape = (out: WireEvent[]) =>
  out.map((wire) => [wire.cursor, (wire.data as { delta: string }).delta] as const);

/** What a run hands over for these deltas of one read, as cursor and text. */
function joined(deltas: RegExpExecArray[], after = Number.NEGATIVE_INFINITY) {
  const out: WireEvent[] = [];
  const run = new DeltaRun(out, after);
  for (const wire of deltas) run.add(wire);
  run.end();
  return shape(out);
}

describe("DeltaRun", () => {
  it("joins a run but its last delta, which goes on alone with its own payload", () => {
    const out: WireEvent[] = [];
    const run = new DeltaRun(out, Number.NEGATIVE_INFINITY);
    const last = delta(13, "d");
    const lastWire = textDeltaOf(last);
    for (const wire of [delta(10, "a"), delta(11, "b"), delta(12, "c"), last]) run.add(wire);
    run.end();
    expect(shape(out)).toEqual([
      ["12", "abc"],
      ["13", "d"],
    ]);
    expect(out[1]).toEqual(lastWire);
    // The joined payload keeps the part's address and the sequence number of its last delta.
    expect(out[0]!.data).toEqual({
      type: "response.output_text.delta",
      item_id: "msg_1",
      output_index: 1,
      content_index: 0,
      delta: "abc",
      sequence_number: 12,
    });
  });

  it("hands over one or two deltas as they came", () => {
    for (const wires of [[delta(1, "a")], [delta(1, "a"), delta(2, "b")]]) {
      const out: WireEvent[] = [];
      const run = new DeltaRun(out, Number.NEGATIVE_INFINITY);
      for (const wire of wires) run.add(wire);
      run.end();
      expect(out).toEqual(wires.map(textDeltaOf));
    }
  });

  it("breaks a run where the content part changes", () => {
    const wires = [
      delta(1, "a"),
      delta(2, "b"),
      delta(3, "c"),
      delta(4, "x", "msg_1", 1),
      delta(5, "y", "msg_2", 1),
    ];
    expect(joined(wires)).toEqual([
      ["2", "ab"],
      ["3", "c"],
      ["4", "x"],
      ["5", "y"],
    ]);
  });

  it("hands an empty delta over alone, after the run before it: the run's last delta is its last text", () => {
    const wires = [delta(1, "a"), delta(2, "b"), delta(3, "c"), delta(4, ""), delta(5, "d"), delta(6, "")];
    expect(joined(wires)).toEqual([
      ["2", "ab"],
      ["3", "c"],
      ["4", ""],
      ["5", "d"],
      ["6", ""],
    ]);
  });

  it("keeps what a resume repeats single: deltas ranked at or below the cursor resumed from", () => {
    const wires = [10, 11, 12, 13, 14, 15, 16].map((seq) => delta(seq, String(seq % 10)));
    expect(joined(wires, 12)).toEqual([
      ["10", "0"],
      ["11", "1"],
      ["12", "2"],
      ["15", "345"],
      ["16", "6"],
    ]);
  });
});
