/**
 * Another OS process that watches a job through Redis (bundled and run by
 * test/redis/tail-process.test.ts). MODE=iterate: prints each event of
 * `createEventLog(redis).tail(JOB, { after: AFTER })` as a JSON line until `done`.
 * MODE=serve: an instance of a web app serving the job as `text/event-stream`
 * (`eventStreamResponse`, `Last-Event-ID` resume); prints its port.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { Redis } from "ioredis";
import { createEventLog, eventStreamResponse } from "../../src/redis/index.js";

const env = process.env as Record<string, string>;
const redis = new Redis({ host: "127.0.0.1", port: Number(env.REDIS_PORT), maxRetriesPerRequest: null });
const log = createEventLog(redis, { prefix: env.PREFIX! });

if (env.MODE === "iterate") {
  const after = env.AFTER === undefined ? undefined : Number(env.AFTER);
  for await (const event of log.tail(env.JOB!, { ...(after !== undefined && { after }), blockMs: 200 }))
    process.stdout.write(`${JSON.stringify(event)}\n`);
  redis.disconnect();
} else {
  const server = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const response = eventStreamResponse(log, env.JOB!, {
      headers: { get: (name) => (req.headers[name.toLowerCase()] as string | undefined) ?? null },
      signal: controller.signal,
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    Readable.fromWeb(response.body as never).pipe(res);
  });
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
}
