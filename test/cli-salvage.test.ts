/**
 * The CLI as a user meets it: a --record that salvages exactly, clear messages for the
 * usual mistakes, progress that reflects an attached job, and the portable engine
 * configured by flags.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { demoAnswer } from "../providers/portable/demo/model.js";
import { describeFailure, run } from "../src/cli/main.js";
import { type ResearchEvent, Sonde } from "../src/index.js";
import { clearMocks, mockResearch } from "../src/testing/index.js";

function io(env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), isTTY: false, env },
    out: () => out.join(""),
    err: () => err.join(""),
  };
}
const scratch = () => mkdtempSync(join(tmpdir(), "sonde-cli-"));
const client = () => new Sonde({ openai: { apiKey: "sk-test-cli-key-000" }, env: {} });
const lines = (text: string) =>
  text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResearchEvent);
const textOf = (events: ResearchEvent[]) => events.map((e) => (e.type === "text" ? e.delta : "")).join("");

afterEach(() => clearMocks());

describe("sonde --record", () => {
  it("keeps the ref just after the last recorded event, so attach continues exactly there", async () => {
    const report = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} of the report.`).join(" ");
    mockResearch(report, {
      delayMs: 40,
      events: [{ type: "search", action: "search", query: "q1", state: "started" }],
    })
      .always()
      .register();
    const c = client();
    const record = join(scratch(), "rec.jsonl");
    const first = io();
    // The CLI stops following part-way (its --timeout), as a crash or ^C would.
    await run(
      ["research", "q", "-m", "openai:gpt-5.5-pro", "--record", record, "--timeout", "300"],
      first.io,
      c,
    ).catch(() => {});
    const recorded = lines(readFileSync(record, "utf8"));
    const ref = JSON.parse(readFileSync(`${record}.ref.json`, "utf8"));
    expect(recorded.at(-1)!.cursor).toBeDefined();
    expect(ref.cursor).toBe(recorded.at(-1)!.cursor);
    expect(textOf(recorded).length).toBeLessThan(report.length); // it really stopped part-way

    const salvage = io();
    expect(await run(["attach", `${record}.ref.json`, "--json"], salvage.io, c)).toBe(0);
    const rest = lines(salvage.out());
    expect(textOf(recorded) + textOf(rest)).toBe(report);
    const cursors = [...recorded, ...rest].flatMap((e) => (e.cursor === undefined ? [] : [e.cursor]));
    expect(new Set(cursors).size).toBe(cursors.length); // nothing delivered twice
    // Progress of the attached job starts from what was recorded, not from nothing.
    const attached = io();
    await run(["attach", `${record}.ref.json`], attached.io, c);
    expect(attached.err().split("\n")[0]).toMatch(/1 searches/);
  });
});

describe("sonde messages", () => {
  it("attach of a recording says to attach its ref (or replay it)", async () => {
    const dir = scratch();
    const record = join(dir, "rec.jsonl");
    writeFileSync(
      record,
      '{"type":"status","status":"running","seq":0}\n{"type":"done","status":"completed","seq":1}\n',
    );
    await expect(run(["attach", record], io().io, client())).rejects.toThrow(/event recording.*sonde replay/);
    writeFileSync(`${record}.ref.json`, "{}");
    await expect(run(["attach", record], io().io, client())).rejects.toThrow(
      `Attach its ref instead: sonde attach ${record}.ref.json`,
    );
    await expect(run(["attach", join(dir, "missing.json")], io().io, client())).rejects.toThrow(
      /no such file/,
    );
  });

  it("replay of a file that is missing or not a recording names the file and line, not a zod dump", async () => {
    const dir = scratch();
    const record = join(dir, "rec.jsonl");
    writeFileSync(record, '{"type":"text","delta":"hi","seq":0}\n{"type":"bogus","seq":1}\n');
    const failure = async (path: string) => {
      const error = await run(["replay", path], io().io, client()).catch((e: unknown) => e);
      return describeFailure(error);
    };
    expect(await failure(record)).toEqual({
      message: expect.stringMatching(
        new RegExp(`^sonde: ${record} line 2 is not a Sonde event \\(type: .*\\)\\. `),
      ),
      exitCode: 2,
    });
    expect((await failure(record)).message).not.toContain('"code"');
    writeFileSync(record, "not json\n");
    expect((await failure(record)).message).toMatch(/line 1 is not JSON.*--record <file> or --json/);
    expect((await failure(join(dir, "missing.jsonl"))).message).toMatch(
      /^sonde: no such file: .*missing\.jsonl/,
    );
  });

  it("--version prints the package version; --help works per command", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    const v = io();
    expect(await run(["--version"], v.io, client())).toBe(0);
    expect(v.out().trim()).toBe(pkg.version);
    const help = io();
    expect(await run(["research", "--help"], help.io, client())).toBe(0);
    expect(help.out()).toMatch(/^Usage: sonde research/);
    expect(help.out()).toContain("--chat-url");
    const attachHelp = io();
    expect(await run(["attach", "-h"], attachHelp.io, client())).toBe(0);
    expect(attachHelp.out()).toMatch(/^Usage: sonde attach <ref\.json>/);
  });

  it("a missing key names the environment variable, not a constructor option", async () => {
    const error = await run(["research", "q", "-m", "gemini:deep-research-preview-04-2026"], io().io).catch(
      (e: unknown) => e,
    );
    const { message, exitCode } = describeFailure(error);
    expect(exitCode).toBe(1);
    expect(message).toMatch(/set it in the environment \(export GEMINI_API_KEY=…\)/);
    expect(message).not.toMatch(/new Sonde|apiKey/);
    const noSearch = describeFailure(
      await run(
        ["research", "q", "-m", "portable:local/m", "--chat-url", "http://127.0.0.1:9/v1"],
        io().io,
      ).catch((e: unknown) => e),
    );
    expect(noSearch.message).toMatch(/needs a search backend[\s\S]*sonde research --help/);
    const usage = describeFailure(await run(["research", "q"], io().io).catch((e: unknown) => e));
    expect(usage).toMatchObject({ exitCode: 2 });
    expect(usage.message).toMatch(/missing --model[\s\S]*Usage: sonde research/);
  });
});

describe("sonde with the portable engine", () => {
  it("chat endpoint, search backend and store come from flags and the environment", async () => {
    const seen = { models: new Set<string>(), searches: [] as string[], auth: new Set<string>() };
    const template = JSON.parse(
      readFileSync(new URL("./fixtures/portable/chat-completion.json", import.meta.url), "utf8"),
    );
    const page = JSON.parse(
      readFileSync(new URL("./fixtures/portable/web.json", import.meta.url), "utf8"),
    )[0];
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const url = new URL(req.url!, "http://127.0.0.1");
      if (url.pathname === "/v1/chat/completions") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        seen.models.add(body.model);
        seen.auth.add(req.headers.authorization ?? "");
        const reply = structuredClone(template);
        reply.choices[0].message.content = demoAnswer(body.messages);
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
      }
      if (url.pathname === "/search") {
        seen.searches.push(url.searchParams.get("q") ?? "");
        const results = [{ url: `${base}/page`, title: page.title, content: page.text.slice(0, 200) }];
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results }));
      }
      res.writeHead(200, { "content-type": "text/plain" }).end(page.text);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const store = scratch();
    try {
      const t = io({ SONDE_CHAT_API_KEY: "sk-local-chat-0000", SONDE_SEARCH_PROVIDER: "searxng" });
      const code = await run(
        [
          "research",
          "How many bicycle commuters crossed the river bridge in 2024?",
          "--model",
          "portable:local/qwen3:32b",
          "--chat-url",
          `${base}/v1`,
          "--search-url",
          base,
          "--store",
          store,
        ],
        t.io,
      );
      // The loop ran to an end over the configured parts (whether the page fetcher reads a
      // loopback page is its own policy: completed or a partial report are both fine here).
      expect([0, 1], t.err()).toContain(code);
      expect(t.err()).toMatch(/\[(completed|incomplete)\]/);
      expect([...seen.models]).toEqual(["qwen3:32b"]);
      expect([...seen.auth]).toEqual(["Bearer sk-local-chat-0000"]);
      expect(seen.searches.length).toBeGreaterThan(0);
      expect(readdirSync(join(store, "jobs"))).toHaveLength(1);
      expect(t.out()).toMatch(/^# /);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("portable flags on another engine are refused with a pointer", async () => {
    await expect(
      run(
        ["research", "q", "-m", "openai:gpt-5.5-pro", "--chat-url", "http://127.0.0.1:1/v1"],
        io().io,
        client(),
      ),
    ).rejects.toThrow(/configure the portable engine/);
  });
});
