import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeFailure, run } from "../src/cli/main.js";
import { JobAbortedError, Sonde } from "../src/index.js";
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

const client = () => new Sonde({ openai: { apiKey: "sk-test-cli-key-000" }, env: {} });

describe("sonde CLI", () => {
  afterEach(() => clearMocks());

  it("models lists the catalog with lifecycle", async () => {
    const t = io();
    expect(await run(["models", "--provider", "openai"], t.io, client())).toBe(0);
    expect(t.out()).toMatch(/openai:gpt-5\.5-pro\s+ga/);
    expect(t.out()).toMatch(/openai:o3-deep-research\s+retired since 2026-07-23/);
    expect(t.out()).not.toMatch(/gemini:/);
  });

  it("models shows the hosted hold and markup instead of token rates, and cached-input prices", async () => {
    const t = io();
    expect(await run(["models"], t.io, client())).toBe(0);
    const line = (id: string) =>
      t
        .out()
        .split("\n")
        .find((l) => l.startsWith(`${id} `)) ?? "";
    expect(line("hosted:agents.deep_research")).toMatch(/\$6\.00 hold · charged 1\.2× provider cost/);
    expect(line("hosted:agents.deep_research")).not.toContain("$0/$0 per M");
    expect(line("gemini:deep-research-preview-04-2026")).toMatch(
      /\$2 \(\$0\.2 cached\)\/\$12 per M \(unconfirmed\)/,
    );
  });

  it("the last progress line after the job completed no longer names the phase it was in", async () => {
    mockResearch("# Report\nBody.", { events: [{ type: "phase", phase: "verifying" }] })
      .always()
      .register();
    const t = io();
    expect(await run(["research", "q", "--model", "openai:gpt-5.5-pro"], t.io, client())).toBe(0);
    const lines = t.err().trim().split("\n");
    expect(lines.some((l) => / verifying · /.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\[completed\] · /);
    expect(lines.at(-1)).not.toContain("verifying");
  });

  it("research streams the report to stdout, progress to stderr, and records events + ref", async () => {
    mockResearch("# Report\nBody text.", {
      citations: [{ url: "https://example.org/a", title: "A" }],
      events: [{ type: "search", action: "search", query: "q1", state: "started" }],
      usage: { inputTokens: 1000, outputTokens: 100 },
    })
      .always()
      .register();
    const dir = mkdtempSync(join(tmpdir(), "sonde-cli-"));
    const record = join(dir, "events.jsonl");
    const t = io();
    const code = await run(
      ["research", "a question", "--model", "openai:gpt-5.5-pro", "--record", record],
      t.io,
      client(),
    );
    expect(code).toBe(0);
    expect(t.out()).toContain("# Report\nBody text.");
    expect(t.out()).toContain("## Sources\n\n1. [A](https://example.org/a)");
    expect(t.err()).toMatch(/\[completed\] .* 1 searches · 1 sources · 1100 tokens · \$0\.0480 \(est\.\)/);
    const ref = JSON.parse(readFileSync(`${record}.ref.json`, "utf8"));
    expect(ref).toMatchObject({ v: 1, provider: "openai" });
    expect(readFileSync(`${record}.ref.json`, "utf8")).not.toContain("sk-test-cli-key");

    // replay rebuilds the same report offline from the recording
    const replayed = io();
    expect(await run(["replay", record], replayed.io, client())).toBe(0);
    expect(replayed.out()).toContain("# Report\nBody text.");
  });

  it("research prints the pre-flight estimate and stops at --max-cost", async () => {
    mockResearch("# Report").always().register();
    const pollOnly = io();
    await run(["research", "q", "--model", "openai:gpt-5.5-pro", "--max-cost", "2"], pollOnly.io, client());
    expect(pollOnly.err()).toMatch(
      /cost: typical cost unknown · cap \$2\.00, checked only when the job ends/,
    );
    expect(pollOnly.err()).toMatch(/note: openai:gpt-5\.5-pro reports no running cost before the job ends/);
    await expect(
      run(["research", "q", "--model", "openai:gpt-5.5-pro", "--max-cost", "free"], io().io, client()),
    ).rejects.toThrow(/--max-cost takes a positive number of US dollars/);
    await expect(
      run(
        ["research", "q", "--model", "openai:gpt-5.5-pro", "--max-cost", "2", "--detach"],
        io().io,
        client(),
      ),
    ).rejects.toThrow(/cannot go with --detach; pass --max-cost to `sonde attach`/);

    // A streamed report of 4,000 characters is ~$0.012 of output at $12 per M: a tenth of a cent stops it early.
    clearMocks();
    mockResearch("word ".repeat(800), { delayMs: 10 }).always().register();
    const capped = io();
    const code = await run(
      ["research", "q", "--model", "gemini:deep-research-preview-04-2026", "--max-cost", "0.001"],
      capped.io,
      client(),
    );
    expect(capped.err()).toMatch(/typically \$1\.00–\$3\.00 per job \(unconfirmed\) · cap \$0\.00100$/m);
    expect(code).toBe(1);
    expect(capped.err()).toMatch(/\[incomplete\]/);
    expect(capped.out().length).toBeLessThan(4000);
  });

  it("attach takes --max-cost too: a detached job is capped once it is followed again", async () => {
    mockResearch("word ".repeat(800), { delayMs: 10 }).always().register();
    const c = client();
    const detached = io();
    await run(
      ["research", "q", "--model", "gemini:deep-research-preview-04-2026", "--detach"],
      detached.io,
      c,
    );
    const dir = mkdtempSync(join(tmpdir(), "sonde-cli-"));
    const refFile = join(dir, "ref.json");
    writeFileSync(refFile, detached.out());
    const attached = io();
    expect(await run(["attach", refFile, "--max-cost", "0.002"], attached.io, c)).toBe(1);
    expect(attached.err()).toMatch(/\[incomplete\]/);
    expect(attached.out()).toMatch(/cost-cap: The spend cap of \$0\.00200 was crossed/);
  });

  it("--json writes one parseable event per line ending with done", async () => {
    mockResearch("json report").always().register();
    const t = io();
    await run(["research", "q", "--model", "openai:gpt-5.5-pro", "--json"], t.io, client());
    const events = t
      .out()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
  });

  it("--detach prints the ref; status and cancel read it back", async () => {
    mockResearch("slow report", { delayMs: 1_000 }).always().register();
    const c = client();
    const t = io();
    expect(await run(["research", "q", "--model", "openai:gpt-5.5-pro", "--detach"], t.io, c)).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "sonde-cli-"));
    const refFile = join(dir, "ref.json");
    writeFileSync(refFile, t.out());
    const cancel = io();
    expect(await run(["cancel", refFile], cancel.io, c)).toBe(0);
    expect(JSON.parse(cancel.out())).toMatchObject({ outcome: "cancelled" });
    const status = io();
    await run(["status", refFile], status.io, c);
    expect(JSON.parse(status.out())).toMatchObject({ status: "cancelled" });
  });

  it("a job that outlives --timeout leaves its ref on stderr, so it can be attached", async () => {
    mockResearch("slow report", { delayMs: 1_000 }).always().register();
    const c = client();
    const t = io();
    const error = await run(
      ["research", "q", "--model", "openai:gpt-5.5-pro", "--timeout", "100"],
      t.io,
      c,
    ).catch((e: unknown) => e);
    expect(JobAbortedError.isInstance(error) && error.code).toBe("timeout");
    const ref = JSON.parse(t.err().slice(t.err().indexOf("{")));
    expect(ref).toMatchObject({ v: 1, provider: "openai", jobId: expect.stringMatching(/^mock_/) });
    expect((await c.research.get(ref)).status).toBe("queued"); // still under way: nothing to lose by attaching
  });

  // Without a handler, ^C killed the process with the ref unsaid: the remote job ran on,
  // billing, with nothing to attach or cancel it by (unless --record was given).
  it("^C while following a job leaves its ref on stderr, as a timeout does, and a second ^C is Node's again", async () => {
    mockResearch("slow report", { delayMs: 1_000 }).always().register();
    const t = io();
    const before = process.listenerCount("SIGINT");
    const running = run(["research", "q", "--model", "openai:gpt-5.5-pro"], t.io, client()).catch(
      (e: unknown) => e,
    );
    while (!t.err().includes("job mock_")) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(process.listenerCount("SIGINT")).toBe(before + 1);
    process.emit("SIGINT");
    const error = await running;
    expect(JobAbortedError.isInstance(error) && error.code).toBe("aborted");
    expect(t.err()).toMatch(/The job keeps running on the provider\. Save this ref/);
    expect(JSON.parse(t.err().slice(t.err().indexOf("{")))).toMatchObject({ v: 1, provider: "openai" });
    expect(process.listenerCount("SIGINT")).toBe(before);
  });

  it("a job that ends other than completed exits 1: a cancelled job's attach, and a failed job that still prints its sources and error", async () => {
    // Four scripted events at 100 ms each: still under way when the cancel lands.
    mockResearch("slow report", { delayMs: 100 }).always().register();
    const c = client();
    const detached = io();
    await run(["research", "q", "--model", "openai:gpt-5.5-pro", "--detach"], detached.io, c);
    const refFile = join(mkdtempSync(join(tmpdir(), "sonde-cli-")), "ref.json");
    writeFileSync(refFile, detached.out());
    expect(await run(["cancel", refFile], io().io, c)).toBe(0);
    const attached = io();
    expect(await run(["attach", refFile], attached.io, c)).toBe(1);
    expect(attached.err()).toMatch(/\[cancelled\]/);

    clearMocks();
    mockResearch("", {
      events: [{ type: "citation", citation: { url: "https://example.org/found", title: "Found" } }],
      fail: { code: "server_error", message: "The server had an error" },
    })
      .always()
      .register();
    const failed = io();
    const error = await run(["research", "q", "--model", "openai:gpt-5.5-pro"], failed.io, c).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "job_failed", providerCode: "server_error" });
    expect(failed.err()).toContain("error server_error: The server had an error");
    // What was found before the failure is not lost.
    expect(failed.out()).toContain("[Found](https://example.org/found)");
  });

  it("cancel exits 1 when the provider could not confirm it (transport-only), and prints the outcome", async () => {
    const refFile = join(mkdtempSync(join(tmpdir(), "sonde-cli-")), "ref.json");
    writeFileSync(
      refFile,
      JSON.stringify({
        v: 1,
        provider: "openrouter",
        model: "openrouter:perplexity/sonar-deep-research",
        jobId: "gen-1767000000-AbCdEfGhIjKlMnOpQrSt",
        createdAt: "2026-07-01T10:00:00.000Z",
        resume: {},
      }),
    );
    const t = io();
    const c = new Sonde({ openrouter: { apiKey: "sk-or-v1-test-cli" }, env: {} });
    expect(await run(["cancel", refFile], t.io, c)).toBe(1);
    expect(JSON.parse(t.out())).toMatchObject({ outcome: "transport-only" });
  });

  it("with no command prints usage and exits 2; --help exits 0", async () => {
    const none = io();
    expect(await run([], none.io, client())).toBe(2);
    expect(none.out()).toMatch(/^Usage:/);
    const help = io();
    expect(await run(["--help"], help.io, client())).toBe(0);
    expect(help.out()).toMatch(/^Usage:/);
  });

  it("models --provider with an unknown name is a usage error listing the valid names", async () => {
    const error = await run(["models", "--provider", "nope"], io().io, client()).catch((e: unknown) => e);
    const { message, exitCode } = describeFailure(error);
    expect(exitCode).toBe(2);
    expect(message).toContain(
      'unknown provider "nope": use one of openai, gemini, openrouter, perplexity, hosted, portable',
    );
    expect(message).toContain("Usage: sonde models");
  });

  it("usage errors are reported, not thrown as crashes", async () => {
    await expect(run(["research", "q"], io().io, client())).rejects.toThrow(/missing --model/);
    await expect(run(["frobnicate"], io().io, client())).rejects.toThrow(/unknown command/);
    // A timeout Sonde cannot read is refused, not silently replaced by the one-hour default.
    for (const timeout of ["10m", "0", "-5"])
      await expect(
        run(["research", "q", "--model", "openai:gpt-5.5-pro", "--timeout", timeout], io().io, client()),
      ).rejects.toThrow(/--timeout/);
  });
});
