/**
 * A failed model call's gap quotes the error, whose message already ends its sentence
 * (Sonde's HTTP errors end with what to do): one full stop, not two.
 */
import { describe, expect, it } from "vitest";
import { askGap } from "../../providers/portable/steps/ask.js";
import type { Run } from "../../providers/portable/steps/run.js";

const run = { budget: { modelCalls: 4 } } as Run;

describe("the gap of a model call that gave nothing usable", () => {
  it.each([
    ["portable 500: Sorry. A failure on portable's side, usually brief: try again later.", "later."],
    ["portable 500: Sorry about that!", "that!"],
    ["connection lost", "lost."],
  ])("ends the quoted error %j with one full stop", (detail, ending) => {
    const gap = askGap(run, "research plan", "failed", detail);
    expect(gap.kind).toBe("interrupted");
    expect(gap.detail.endsWith(ending)).toBe(true);
    expect(gap.detail).not.toMatch(/[.!?]\./);
  });
});
