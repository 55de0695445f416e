/**
 * A process that is done with a local job can exit. After `break`, a portable job keeps
 * running in its process (as a remote job keeps running on its servers), so the process
 * stays alive while the loop works; `job.detach()` pauses it with its progress saved, the
 * process exits at once, and attaching the ref elsewhere continues it. A real child process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoAnswer } from "../../providers/portable/demo/model.js";
import { type JobRef, Sonde } from "../../src/index.js";
import { fixtureJson } from "./helpers.js";

let dir: string;
let script: string;
let server: Server;
let chatURL: string;
/** While true the chat endpoint never answers (a slow model); requests it saw, and which were abandoned. */
let stall = true;
const seen = { requests: 0, abandoned: 0 };
let onRequest: () => void = () => {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sonde-exit-test-"));
  script = join(dir, "leave-job.mjs");
  await build({
    entryPoints: [new URL("child/leave-job.ts", import.meta.url).pathname],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: script,
    logLevel: "silent",
  });
  const template = fixtureJson<{ choices: { message: { content: string } }[] }>("chat-completion.json");
  server = createServer(async (req, res) => {
    seen.requests++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (stall) {
      res.on("close", () => seen.abandoned++);
      onRequest();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { messages: never };
    const reply = structuredClone(template);
    reply.choices[0]!.message.content = demoAnswer(body.messages);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  chatURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
});

function run(mode: "detach" | "break", store: string) {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, CHAT_URL: chatURL, STORE_DIR: store, MODE: mode },
    stdio: [mode === "detach" ? "pipe" : "ignore", "pipe", "pipe"],
  });
  // Detach once the loop waits on a model call.
  onRequest = () => child.stdin?.write("go\n");
  let stdout = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, ref: () => JSON.parse(stdout.trim()) as JobRef };
}

const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([
    promise,
    new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), ms)),
  ]);

const kill = async (child: ChildProcess, exited: Promise<unknown>) => {
  child.kill("SIGKILL");
  await exited;
};

describe("leaving a local job", () => {
  it("after break, the local job keeps running and keeps its process alive", async () => {
    stall = true;
    const { child, exited } = run("break", join(dir, "store-break"));
    try {
      expect(await within(exited, 2_000)).toBe("still running");
      expect(seen.requests).toBeGreaterThan(0); // the loop is waiting on its model call
    } finally {
      await kill(child, exited);
    }
  });

  it("detach() pauses it: the process exits, and attaching the ref continues the job", async () => {
    stall = true;
    const store = join(dir, "store-detach");
    const before = { ...seen };
    const { child, exited, ref } = run("detach", store);
    const code = await within(exited, 30_000);
    if (code === "still running") await kill(child, exited);
    expect(code).toBe(0);
    // The in-flight model call was abandoned, not left open.
    expect(seen.requests).toBeGreaterThan(before.requests);
    expect(seen.abandoned).toBeGreaterThan(before.abandoned);

    stall = false;
    const client = new Sonde({
      env: {},
      portable: { chat: { local: { baseURL: chatURL } }, store: { dir: store } },
    });
    // The abandoned call may have been billed: by default it would become a gap; sending it
    // again takes an explicit yes.
    const result = await client.research.attach(ref(), { repeatInterruptedCalls: true }).result();
    expect(result.status).toBe("completed");
    expect(result.report).toContain("1.2 million");
  });
});
