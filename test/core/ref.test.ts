import { describe, expect, it } from "vitest";
import { InvalidRefError, parseRef, Sonde } from "../../src/index.js";

const good = {
  v: 1,
  provider: "openai",
  model: "openai:gpt-5.5-pro",
  jobId: "resp_123",
  cursor: "41",
  createdAt: "2026-11-29T10:00:00.000Z",
  deadlineAt: "2026-11-29T11:00:00.000Z",
  resume: { responseId: "resp_123" },
};

function fieldOf(input: unknown): string | undefined {
  try {
    parseRef(input);
  } catch (error) {
    expect(InvalidRefError.isInstance(error)).toBe(true);
    return (error as InvalidRefError).field;
  }
  return undefined;
}

describe("refs", () => {
  it("round-trips through JSON text", () => {
    expect(parseRef(JSON.stringify(good))).toEqual(good);
  });

  it("names the bad field", () => {
    const { jobId: _, ...missing } = good;
    expect(fieldOf(missing)).toBe("jobId");
    expect(fieldOf({ ...good, provider: "anthropic" })).toBe("provider");
    expect(fieldOf({ ...good, createdAt: "yesterday" })).toBe("createdAt");
    expect(fieldOf({ ...good, extra: true })).toBe("(root)");
    expect(fieldOf("{not json")).toBe("(root)");
    expect(fieldOf(null)).toBe("(root)");
  });

  it("rejects an unknown version with advice", () => {
    expect(fieldOf({ ...good, v: 2 })).toBe("v");
    expect(() => parseRef({ ...good, v: 2 })).toThrow(/Upgrade Sonde/);
  });

  it("a ref whose model is another engine's says so, not that the catalog lacks the model", () => {
    const client = new Sonde({ env: {}, openai: { apiKey: "sk-test-ref-0000" } });
    const edited = JSON.stringify({ ...good, model: "gemini:deep-research-preview-04-2026" });
    expect(() => client.research.attach(edited)).toThrow(
      /model "gemini:deep-research-preview-04-2026" is not openai's: the ref was edited.*job\.toRef\(\)/,
    );
    expect(() => client.research.attach(JSON.stringify({ ...good, model: "openai:gpt-9" }))).toThrow(
      /does not know.*newer Sonde/,
    );
  });
});
