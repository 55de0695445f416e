/**
 * A real Redis for tests: Debian's `redis-server` (installed by .ci/run) on a free loopback
 * port with its own temporary directory, stopped afterwards. No mock, no silent skip: if it
 * cannot start, the test fails saying why.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface RedisServer {
  port: number;
  url: string;
  dir: string;
  /** A new client (closed by `stop`). */
  client(): Redis;
  /** SIGKILLs the server (data since the last fsync may be lost; appendfsync always keeps it). */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

export async function startRedis(options: { persistent?: boolean } = {}): Promise<RedisServer> {
  const probe = spawnSync("redis-server", ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `redis-server is not installed or does not run (${probe.error?.message ?? probe.stderr}). ` +
        "Install it with `apt-get install -y redis-server` (.ci/run does this in CI).",
    );
  }
  const dir = await mkdtemp(join(tmpdir(), "sonde-redis-"));
  const port = await freePort();
  const clients: Redis[] = [];
  let child: ChildProcess | undefined;
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    options.persistent ? "yes" : "no",
    "--appendfsync",
    "always",
    "--protected-mode",
    "yes",
  ];
  const launch = async () => {
    const proc = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    let output = "";
    proc.stdout!.on("data", (chunk) => {
      output += chunk;
    });
    proc.stderr!.on("data", (chunk) => {
      output += chunk;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`redis-server did not start within 10 s on port ${port}:\n${output}`)),
        10_000,
      );
      const check = () => {
        if (/Ready to accept connections/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout!.on("data", check);
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}) on port ${port}:\n${output}`));
      });
    });
  };
  const kill = async () => {
    const proc = child;
    // A process killed by a signal keeps exitCode null (its signalCode says it ended).
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise((resolve) => {
      proc.once("exit", resolve);
      proc.kill("SIGKILL");
    });
  };
  await launch();
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    client() {
      const client = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: null, lazyConnect: false });
      clients.push(client);
      return client;
    },
    kill,
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      for (const client of clients) client.disconnect();
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
