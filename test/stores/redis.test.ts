import { afterAll, beforeAll } from "vitest";
import { createRedisStore } from "../../src/redis/index.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";
import { storeContract } from "./contract.js";

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server?.stop());

storeContract("redis", () => createRedisStore(server.client(), { prefix: "t:" }));
