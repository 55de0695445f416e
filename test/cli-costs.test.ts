/**
 * How the CLI says what things cost: one formatting rule for every amount, the offline demo
 * as free, and the portable engine as costing what its configured chat model costs.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { run } from "../src/cli/main.js";
import { Progress } from "../src/cli/render.js";
import { Sonde } from "../src/index.js";
import { dollars } from "../src/spend.js";
import { clearMocks, mockResearch } from "../src/testing/index.js";

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), isTTY: false },
    out: () => out.join(""),
    err: () => err.join(""),
  };
}

const client = () => new Sonde({ openai: { apiKey: "sk-test-cli-costs-000" }, env: {} });
afterEach(() => clearMocks());

it("writes every amount one way: cents from a dollar up and for zero, three digits below, no exponent", () => {
  expect([0, 2, 12.345, 0.048, 0.001, 0.0000123, 1e-9].map(dollars)).toEqual([
    "$0.00",
    "$2.00",
    "$12.35",
    "$0.0480",
    "$0.00100",
    "$0.0000123",
    "<$0.000001",
  ]);
  // The progress line: the same zero before any usage arrived and after a usage of nothing.
  const progress = new Progress();
  const before = progress.line();
  progress.update({
    type: "usage",
    seq: 0,
    usage: {
      inputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      internalReasoningTokens: 0,
      searches: 0,
      fetches: 0,
      modelCalls: 0,
      costUSD: 0,
      costSource: "provider",
    },
  });
  expect(before.endsWith(" · $0.00")).toBe(true);
  expect(progress.line().endsWith(" · $0.00")).toBe(true);
});

it("research and replay print the job's cost alike", async () => {
  mockResearch("# Report", { usage: { inputTokens: 1000, outputTokens: 100 } })
    .always()
    .register();
  const record = join(mkdtempSync(join(tmpdir(), "sonde-cli-costs-")), "events.jsonl");
  const live = io();
  expect(
    await run(["research", "q", "--model", "openai:gpt-5.5-pro", "--record", record], live.io, client()),
  ).toBe(0);
  expect(live.err()).toMatch(/ · \$0\.0480 \(est\.\)\n$/);
  const replayed = io();
  expect(await run(["replay", record], replayed.io, client())).toBe(0);
  expect(replayed.err()).toMatch(/replayed: status completed, 0 sources, \$0\.0480\n/);
});

it("the offline demo's pre-flight line says it costs nothing, not that its cost is unknown", async () => {
  mockResearch("# Demo").always().register();
  const t = io();
  expect(await run(["research", "q", "--model", "portable:demo/offline"], t.io, client())).toBe(0);
  expect(t.err()).toMatch(/^cost: \$0\.00 per job \(offline: .*nothing is billed\)$/m);
  expect(t.err()).not.toContain("unknown");
  // Any other portable model costs what its chat model and search backend charge.
  const local = new Sonde({
    portable: {
      chat: { local: { baseURL: "http://127.0.0.1:9/v1" } },
      search: { provider: "searxng", baseURL: "http://127.0.0.1:9" },
    },
    env: {},
  });
  const other = io();
  expect(await run(["research", "q", "--model", "portable:local/my-model"], other.io, local)).toBe(0);
  expect(other.err()).toMatch(/^cost: that of the chat model and search backend you configure/m);
});

it("sonde models says the portable engine costs what the configured chat model costs", async () => {
  const t = io();
  expect(await run(["models", "--provider", "portable"], t.io, client())).toBe(0);
  const line = (id: string) =>
    t
      .out()
      .split("\n")
      .find((l) => l.startsWith(`${id} `)) ?? "";
  expect(line("portable:*")).toContain("cost: that of the chat model and search backend you configure");
  expect(line("portable:demo/offline")).toMatch(/\$0\.00 per job \(offline: .*nothing is billed\)/);
  expect(t.out()).not.toContain("$0/$0 per M");
});

it("the hosted job API's pre-flight line gives its markup and hold, not the portable engine's wording", async () => {
  mockResearch("# Hosted").always().register();
  const hosted = new Sonde({
    hosted: { apiKey: "hk-test-cli-costs-000", baseURL: "http://127.0.0.1:9" },
    env: {},
  });
  const t = io();
  expect(await run(["research", "q", "--model", "hosted:agents.deep_research"], t.io, hosted)).toBe(0);
  expect(t.err()).toMatch(
    /^cost: charged 1\.2× the upstream provider's cost, typical cost unknown · the provider holds \$6\.00 at the start$/m,
  );
  expect(t.err()).not.toContain("chat model");
});
