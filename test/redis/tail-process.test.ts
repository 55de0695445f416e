/**
 * Tailing from another OS process: a child process follows a job's events through Redis,
 * with the async iterable and as a web instance serving `text/event-stream`, across a
 * dropped Redis connection, a killed reader and a browser's reconnect with `Last-Event-ID`
 * to a different instance. Every event arrives exactly once, with the seq it was stored under.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResearchEvent } from "../../src/index.js";
import { createEventLog } from "../../src/redis/index.js";
import { bundleScript } from "../helpers/bundle.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
let bundle: string;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  [redis, bundle] = await Promise.all([startRedis(), bundleScript("test/redis/tail-child.ts", "tail-child")]);
}, 60_000);
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await redis?.stop();
});

const event = (seq: number, last = false): ResearchEvent =>
  (last
    ? { type: "done", seq, status: "completed" }
    : { type: "text", seq, delta: `word${seq} ` }) as ResearchEvent;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A child process and the lines it prints. */
function child(env: Record<string, string>) {
  const proc = spawn(process.execPath, [bundle], {
    env: { ...process.env, REDIS_PORT: String(redis.port), ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: proc.stdout! }).on("line", (line) => {
    lines.push(line);
    for (const wake of waiters.splice(0)) wake();
  });
  const until = async (count: number) => {
    const end = Date.now() + 15_000;
    while (lines.length < count) {
      if (Date.now() > end) throw new Error(`the child printed ${lines.length} lines, not ${count}`);
      await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), pause(100)]);
    }
  };
  const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
  return { proc, lines, until, exited };
}

/** Drops every client connection Redis has (the test's own reconnect; so must the child's). */
const dropConnections = async () => Number(await redis.client().call("CLIENT", "KILL", "TYPE", "normal"));

describe("tailing a job from another process", () => {
  it("the async iterable: every event once, same seq, across a dropped connection and a killed reader", async () => {
    const prefix = "tp1:";
    const writer = createEventLog(redis.client(), { prefix });
    for (let seq = 0; seq < 5; seq++) await writer.append("j1", event(seq));
    const first = child({ MODE: "iterate", PREFIX: prefix, JOB: "j1" });
    await first.until(5);
    expect(await dropConnections()).toBeGreaterThan(0);
    for (let seq = 5; seq < 10; seq++) {
      await pause(20);
      await writer.append("j1", event(seq));
    }
    await first.until(10);
    first.proc.kill("SIGKILL");
    await first.exited;
    const seen = first.lines.map((line) => JSON.parse(line) as ResearchEvent);
    // Written while nobody watched, then live.
    for (let seq = 10; seq < 13; seq++) await writer.append("j1", event(seq));
    const second = child({ MODE: "iterate", PREFIX: prefix, JOB: "j1", AFTER: String(seen.at(-1)!.seq) });
    for (let seq = 13; seq < 20; seq++) {
      await pause(20);
      await writer.append("j1", event(seq, seq === 19));
    }
    const ended = Date.now();
    expect(await second.exited).toBe(0);
    // The child quits its client without closing the log: the tail's connection, kept idle
    // for the next tail (30 s), must not keep the process alive.
    expect(Date.now() - ended).toBeLessThan(15_000);
    seen.push(...second.lines.map((line) => JSON.parse(line) as ResearchEvent));
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(seen).toEqual(await writer.read("j1"));
  });

  it("text/event-stream: a browser that drops and reconnects to another instance with Last-Event-ID gets every event once", async () => {
    const prefix = "tp2:";
    const writer = createEventLog(redis.client(), { prefix });
    const instance = async () => {
      const server = child({ MODE: "serve", PREFIX: prefix, JOB: "j2" });
      await server.until(1);
      return { ...server, url: `http://127.0.0.1:${server.lines[0]}/` };
    };
    const received: { id: string; seq: number; type: string }[] = [];
    const ends: unknown[] = [];
    /** Reads the stream until `stopAfter` events (then drops the connection) or its end. */
    const read = async (url: string, lastEventId: string | undefined, stopAfter: number) => {
      const controller = new AbortController();
      const response = await fetch(url, {
        headers: lastEventId ? { "last-event-id": lastEventId } : {},
        signal: controller.signal,
      });
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      const reader = response
        .body!.pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream())
        .getReader();
      let count = 0;
      try {
        while (true) {
          const { done, value } = await reader.read();
          if (done) break;
          if (value.event === "end") {
            ends.push(JSON.parse(value.data));
            continue;
          }
          received.push({
            id: value.id!,
            seq: (JSON.parse(value.data) as ResearchEvent).seq,
            type: value.event!,
          });
          if (++count === stopAfter) break;
        }
      } finally {
        controller.abort(); // the browser's connection drops (or the stream ended)
      }
      return received.at(-1)?.id;
    };
    for (let seq = 0; seq < 4; seq++) await writer.append("j2", event(seq));
    const a = await instance();
    const last = await read(a.url, undefined, 3);
    expect(last).toBe("2");
    // The instance the browser watched goes away; it reconnects through another one.
    a.proc.kill("SIGKILL");
    for (let seq = 4; seq < 7; seq++) await writer.append("j2", event(seq));
    const b = await instance();
    const writing = (async () => {
      for (let seq = 7; seq < 12; seq++) {
        await pause(30);
        // Mid-stream, Redis drops the instance's connection: the tail picks up where it was.
        if (seq === 9) await dropConnections();
        await writer.append("j2", event(seq, seq === 11));
      }
    })();
    await read(b.url, last, Number.POSITIVE_INFINITY);
    await writing;
    expect(received.map((r) => r.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(received.map((r) => r.id)).toEqual(received.map((r) => String(r.seq)));
    expect(received.at(-1)?.type).toBe("done");
    // The stream's last word says how the job ended (a browser closes its EventSource on it).
    expect(ends).toEqual([{ status: "completed" }]);
    b.proc.kill("SIGKILL");
  });
});
