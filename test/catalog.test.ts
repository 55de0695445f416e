import { describe, expect, it } from "vitest";
import { Catalog, CatalogProvider, findModel, listModels, models, nearestModels } from "../catalog/index.js";

describe("catalog data", () => {
  it("parses against the schema", () => {
    expect(() => Catalog.parse(models)).not.toThrow();
    expect(models.length).toBeGreaterThan(0);
  });

  it("has unique ids", () => {
    const ids = models.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("prefixes every id with its provider and ends it with its model", () => {
    for (const m of models) {
      expect(m.id).toBe(`${m.provider}:${m.model}`);
    }
  });

  it("has no alias that collides with another id of the same provider", () => {
    for (const m of models) {
      for (const alias of m.aliases ?? []) {
        expect(models.some((o) => o.id === `${m.provider}:${alias}`)).toBe(false);
      }
    }
  });

  it("points every replacement at an existing, non-retired id", () => {
    for (const m of models) {
      const replacement = m.lifecycle.replacement;
      if (replacement === undefined) continue;
      const target = models.find((o) => o.id === replacement);
      expect(target, `${m.id} -> ${replacement}`).toBeDefined();
      expect(target?.lifecycle.stage).not.toBe("retired");
    }
  });

  it("gives every retired model a shutdown date and a replacement", () => {
    for (const m of models.filter((o) => o.lifecycle.stage === "retired")) {
      expect(m.lifecycle.shutdownAt, m.id).toBeDefined();
      expect(m.lifecycle.replacement, m.id).toBeDefined();
    }
  });

  it("keeps capability flags consistent", () => {
    for (const m of models) {
      const c = m.capabilities;
      if (c.pollOnly) {
        expect(c.streaming, m.id).toBe(false);
        expect(c.background, m.id).toBe(true);
      }
      if (c.resume && m.provider !== "portable") expect(c.background, m.id).toBe(true);
    }
  });

  it("documents every unverified price", () => {
    for (const m of models.filter((o) => !o.pricing.verified)) {
      expect(m.pricing.notes, m.id).toBeTruthy();
    }
  });

  it("covers every provider", () => {
    for (const provider of CatalogProvider.options) {
      expect(listModels({ provider }).length, provider).toBeGreaterThan(0);
    }
  });

  it("has the required entries", () => {
    const required = [
      "openai:gpt-5.5-pro",
      "openai:o3-deep-research",
      "openai:o4-mini-deep-research",
      "gemini:deep-research-preview-04-2026",
      "gemini:deep-research-max-preview-04-2026",
      "openrouter:perplexity/sonar-deep-research",
      "openrouter:perplexity/sonar-pro-search",
      "openrouter:openai/o3-deep-research",
      "openrouter:openai/o4-mini-deep-research",
      "perplexity:sonar-deep-research",
      "perplexity:medium",
      "perplexity:high",
      "hosted:agents.deep_research",
      "portable:*",
      "portable:demo/offline",
    ];
    for (const id of required)
      expect(
        models.some((m) => m.id === id),
        id,
      ).toBe(true);
  });
});

describe("listModels", () => {
  it("returns everything without a filter", () => {
    expect(listModels()).toHaveLength(models.length);
  });

  it("filters by provider", () => {
    const gemini = listModels({ provider: "gemini" });
    expect(gemini.map((m) => m.id).sort()).toEqual([
      "gemini:deep-research-max-preview-04-2026",
      "gemini:deep-research-preview-04-2026",
    ]);
  });

  it("filters by capability", () => {
    const pollOnly = listModels({ capabilities: { pollOnly: true } });
    expect(pollOnly.map((m) => m.id).sort()).toEqual([
      "hosted:agents.deep_research",
      "openai:gpt-5.5-pro",
      "perplexity:sonar-deep-research",
    ]);
    const resumable = listModels({ capabilities: { resume: true, background: true } });
    expect(resumable.every((m) => m.capabilities.resume && m.capabilities.background)).toBe(true);
    expect(resumable.some((m) => m.id === "gemini:deep-research-preview-04-2026")).toBe(true);
    const notStreaming = listModels({ capabilities: { streaming: false } });
    expect(notStreaming.every((m) => !m.capabilities.streaming)).toBe(true);
  });

  it("filters by tool", () => {
    const mcp = listModels({ tool: "mcp" });
    expect(mcp.length).toBeGreaterThan(0);
    expect(mcp.every((m) => m.capabilities.tools.includes("mcp"))).toBe(true);
    expect(mcp.some((m) => m.provider === "openrouter")).toBe(false);
    expect(listModels({ tool: "web_search", provider: "portable" })).toHaveLength(2);
  });

  it("leaves out retired models on request", () => {
    const live = listModels({ provider: "openai", excludeRetired: true });
    expect(live.map((m) => m.id)).toEqual(["openai:gpt-5.5-pro"]);
  });
});

describe("findModel", () => {
  it("finds an exact id", () => {
    expect(findModel("openai:gpt-5.5-pro")?.model).toBe("gpt-5.5-pro");
  });

  it("resolves dated snapshot aliases", () => {
    expect(findModel("openai:o3-deep-research-2025-06-26")?.id).toBe("openai:o3-deep-research");
    expect(findModel("openai:o4-mini-deep-research-2025-06-26")?.id).toBe("openai:o4-mini-deep-research");
  });

  it("does not resolve an alias under another provider", () => {
    expect(findModel("gemini:o3-deep-research-2025-06-26")).toBeUndefined();
  });

  it("resolves the portable family and keeps the requested names", () => {
    const m = findModel("portable:openrouter/openai/gpt-5-mini");
    expect(m).toBeDefined();
    expect(m?.id).toBe("portable:openrouter/openai/gpt-5-mini");
    expect(m?.model).toBe("openrouter/openai/gpt-5-mini");
    expect(m?.provider).toBe("portable");
    expect(m?.limits.maxDurationMs).toBe(900_000);
  });

  it("prefers the concrete demo entry over the family", () => {
    expect(findModel("portable:demo/offline")?.pricing.verified).toBe(true);
  });

  it("returns undefined for unknown or malformed ids", () => {
    expect(findModel("openai:gpt-9")).toBeUndefined();
    expect(findModel("nonsense")).toBeUndefined();
    expect(findModel("portable:")).toBeUndefined();
  });
});

describe("nearestModels", () => {
  it("puts the closest id first", () => {
    expect(nearestModels("openai:gpt-5.5-po")[0]).toBe("openai:gpt-5.5-pro");
  });

  it("never suggests family entries and honours the limit", () => {
    const near = nearestModels("portable:x", 5);
    expect(near).toHaveLength(5);
    expect(near.some((id) => id.endsWith("*"))).toBe(false);
  });

  it("never suggests a retired model, which start() would refuse", () => {
    const retired = new Set(models.filter((m) => m.lifecycle.stage === "retired").map((m) => m.id));
    expect(retired.has("openai:o3-deep-research")).toBe(true);
    for (const typo of [
      "gemini:deep-research-preview",
      "openai:o3-deep-researc",
      "perplexity:sonar-deep-researc",
    ]) {
      const near = nearestModels(typo);
      expect(near).toHaveLength(3);
      expect(near.filter((id) => retired.has(id))).toEqual([]);
    }
  });
});
