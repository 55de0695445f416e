import { afterEach, describe, expect, it, vi } from "vitest";
import { createMemoryStore } from "../../providers/portable/index.js";
import { Sonde } from "../../src/index.js";
import { collect, spans } from "./helpers.js";

const QUERY = "How do deep research agents verify their citations?";

describe("portable:demo/offline", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("runs a real job end to end with no key, no config and no network, citing verified quotations", async () => {
    const network = vi.fn(() => {
      throw new Error("the offline demo touched the network");
    });
    vi.stubGlobal("fetch", network);
    const client = new Sonde({ env: {} });
    const job = client.research.start({ model: "portable:demo/offline", query: QUERY });
    const events = await collect(job);
    const result = await job.result();

    expect(network).not.toHaveBeenCalled();
    expect(result.status).toBe("completed");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(result.gaps).toEqual([]);
    expect(result.report).toMatch(/^# Research brief: How do deep research agents verify their citations\?/);
    expect(result.report).toContain(
      "First, a mechanical check confirms that every quotation appears word for word in the stored text of its source [1].",
    );
    const verified = result.citations.filter((c) => c.verified);
    expect(verified.length).toBeGreaterThanOrEqual(1);
    expect(verified[0]).toMatchObject({ url: "https://demo.sonde.invalid/notes/verifying" });
    for (const span of spans(result.report, events)) expect(result.report).toContain(span);
    expect(result.usage).toMatchObject({ modelCalls: 4, costUSD: 0 });
    expect(result.usage.searches).toBeGreaterThan(0);
    expect(result.usage.fetches).toBeGreaterThan(0);
  });

  it("is deterministic and re-attachable like any portable job", async () => {
    const network = vi.fn(() => {
      throw new Error("network");
    });
    const client = new Sonde({ env: {}, fetch: network, portable: { store: createMemoryStore() } });
    const first = client.research.start({ model: "portable:demo/offline", query: QUERY });
    const second = client.research.start({ model: "portable:demo/offline", query: QUERY });
    const [a, b] = await Promise.all([first.result(), second.result()]);
    expect(b.report).toBe(a.report);

    const attached = client.research.attach({ ...first.toRef(), cursor: "3" });
    expect((await attached.result()).report).toBe(a.report);
    expect(network).not.toHaveBeenCalled();
  });

  it("reads only its bundled corpus: any other URL is an unreadable source, not a network call", async () => {
    const network = vi.fn(() => {
      throw new Error("network");
    });
    const client = new Sonde({ env: {}, fetch: network, portable: { store: createMemoryStore() } });
    const job = client.research.start({
      model: "portable:demo/offline",
      query: QUERY,
      sources: { urls: ["https://example.com/elsewhere"] },
    });
    const result = await job.result();
    expect(network).not.toHaveBeenCalled();
    expect(result.gaps).toContainEqual({
      kind: "unreadable-source",
      detail:
        "https://example.com/elsewhere could not be read: the offline demo reads only its bundled corpus, and this URL is not in it.",
      source: "https://example.com/elsewhere",
    });
  });
});
