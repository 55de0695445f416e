/** The test Redis helper: a server killed (as a chaos test does) restarts; a second kill is a no-op. */
import { expect, it } from "vitest";
import { startRedis } from "./redis-server.js";

it("kill(), then restart(), brings the server back (a killed process keeps exitCode null)", async () => {
  const redis = await startRedis();
  try {
    await redis.kill();
    await redis.kill();
    await redis.restart();
    expect(await redis.client().ping()).toBe("PONG");
  } finally {
    await redis.stop();
  }
}, 20_000);
