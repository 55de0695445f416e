/**
 * Many workers, one job each: two research workers and a web endpoint on one Redis. The
 * endpoint queues jobs and streams any job's events to a browser (text/event-stream with
 * Last-Event-ID resume), whichever instance the browser reaches. Run Redis first:
 *
 *   docker run --rm -p 6379:6379 redis:7      (or: redis-server)
 *   npx tsx examples/fleet.ts
 *   curl -X POST 'localhost:3000/jobs?key=demo-1' -d 'How do deep research agents verify citations?'
 *   curl -N localhost:3000/jobs/<id>/events
 */
import { createServer } from "node:http";
import { Redis } from "ioredis";
import { Sonde } from "sonde";
import { createEventLog, createRedisStore, eventStreamResponse } from "sonde/redis";
import { createResearchQueue, createResearchWorker } from "sonde/worker";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
// BullMQ needs connections that wait out a reconnect instead of failing commands.
const connect = () => new Redis(url, { maxRetriesPerRequest: null });
// Every process gets the same configuration; portable jobs live in Redis, so any worker can
// take one over. The demo model needs no key; add provider keys as usual.
const sonde = (redis: Redis) => new Sonde({ portable: { store: createRedisStore(redis) } });

// Two workers (in production: separate processes or machines, each with this code).
for (let i = 0; i < 2; i++) {
  const redis = connect();
  createResearchWorker({ redis, client: sonde(redis), concurrency: 4 });
}

const redis = connect();
const queue = createResearchQueue({ redis, client: sonde(redis) });
const events = createEventLog(redis);

createServer(async (req, res) => {
  const path = new URL(req.url ?? "/", "http://localhost");
  if (req.method === "POST" && path.pathname === "/jobs") {
    let query = "";
    for await (const chunk of req) query += chunk;
    try {
      const { id } = await queue.enqueue(
        { model: "portable:demo/offline", query },
        { idempotencyKey: path.searchParams.get("key") ?? query },
      );
      res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ id }));
    } catch (error) {
      res.writeHead(400).end((error as Error).message);
    }
    return;
  }
  const match = /^\/jobs\/([\w-]+)\/events$/.exec(path.pathname);
  if (req.method === "GET" && match) {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const response = eventStreamResponse(events, match[1]!, {
      headers: { get: (name) => (req.headers[name.toLowerCase()] as string | undefined) ?? null },
      signal: controller.signal,
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    const reader = response.body!.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) res.write(next.value);
    res.end();
    return;
  }
  res.writeHead(404).end();
}).listen(3000, () => console.log("queue jobs at POST http://localhost:3000/jobs"));
