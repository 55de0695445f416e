import { describe, expect, it } from "vitest";
import { documentUrl, eventKey, gapKey, modelCall, receiptKey } from "../../providers/portable/keys.js";

// Stored jobs replay by these exact strings: a change here must be deliberate, never a typo.
describe("the portable replay contract", () => {
  it("keeps the receipt keys of stored jobs byte for byte", () => {
    expect(receiptKey.model(modelCall.plan)).toBe("model:plan");
    expect(receiptKey.modelRetry(modelCall.extract(2))).toBe("model:extract:2#retry");
    expect(receiptKey.model(modelCall.check)).toBe("model:check");
    expect(receiptKey.model(modelCall.write)).toBe("model:write");
    expect(receiptKey.search("solar output 2024")).toBe("search:solar output 2024");
    expect(receiptKey.fetch("https://a.example/x")).toBe("fetch:https://a.example/x");
  });

  it("keeps the event keys of stored jobs byte for byte", () => {
    expect(eventKey.created).toBe("created");
    expect([eventKey.statusQueued, eventKey.statusRunning, eventKey.statusTerminal]).toEqual([
      "status:queued",
      "status:running",
      "status:terminal",
    ]);
    expect(eventKey.phase("reasoning")).toBe("phase:reasoning");
    expect(eventKey.usage("final")).toBe("usage:final");
    expect(eventKey.searchStarted("q")).toBe("search:started:q");
    expect(eventKey.searchDone("q")).toBe("search:done:q");
    expect(eventKey.openStarted("https://a.example/")).toBe("open:started:https://a.example/");
    expect(eventKey.openDone("https://a.example/")).toBe("open:done:https://a.example/");
    expect(eventKey.text("partial", 3)).toBe("text:partial:3");
    expect(eventKey.citation("final", 0)).toBe("citation:final:0");
    expect(documentUrl(1)).toBe("document:1");
  });

  it("keeps the gap keys of stored jobs byte for byte", () => {
    expect(eventKey.gap(gapKey.searchBudgetZero)).toBe("gap:search-budget-zero");
    expect(eventKey.gap(gapKey.excluded("https://b.example/"))).toBe("gap:excluded:https://b.example/");
    expect(eventKey.gap(gapKey.corpus("document:2"))).toBe("gap:corpus:document:2");
    expect(eventKey.gap(gapKey.extract(0))).toBe("gap:extract:0");
    expect(eventKey.gap(gapKey.verdict("F3"))).toBe("gap:verdict:F3");
    expect(eventKey.gap(gapKey.derived("N1"))).toBe("gap:derived:N1");
    expect(eventKey.gap(gapKey.uncheckedCitations)).toBe("gap:unchecked-citations");
    const fixed = Object.fromEntries(Object.entries(gapKey).filter(([, v]) => typeof v === "string"));
    expect(fixed).toEqual({
      searchBudgetZero: "search-budget-zero",
      planBudget: "plan-budget",
      plan: "plan",
      readBudget: "read-budget",
      searchBudget: "search-budget",
      fetchBudget: "fetch-budget",
      noSources: "no-sources",
      extractBudget: "extract-budget",
      rejectedQuotes: "rejected-quotes",
      noFindings: "no-findings",
      check: "check",
      checkMissing: "check-missing",
      write: "write",
      draft: "draft",
      deadline: "deadline",
      unverified: "unverified",
      uncheckedCitations: "unchecked-citations",
    });
    expect(gapKey.searchFailed("q")).toBe("search-failed:q");
    expect(gapKey.unreadable("https://c.example/")).toBe("unreadable:https://c.example/");
  });
});

describe("one home for the keys", () => {
  it("no portable module but keys.ts spells an event key as a string literal", async () => {
    const { readdirSync, readFileSync, statSync } = await import("node:fs");
    const { join } = await import("node:path");
    const dir = join(import.meta.dirname, "../../providers/portable");
    const files = (path: string): string[] =>
      readdirSync(path).flatMap((name) => {
        const full = join(path, name);
        return statSync(full).isDirectory() ? files(full) : full.endsWith(".ts") ? [full] : [];
      });
    const fixed = [eventKey.statusQueued, eventKey.statusRunning, eventKey.statusTerminal];
    const spelled = files(dir)
      .filter((file) => !file.endsWith("keys.ts"))
      .flatMap((file) => {
        const text = readFileSync(file, "utf8");
        return fixed.filter((key) => text.includes(`"${key}"`)).map((key) => `${file}: "${key}"`);
      });
    expect(spelled).toEqual([]);
  });
});
