/**
 * `sonde/redis`: Sonde's fleet layer over Redis (ioredis, an optional peer): a shared job
 * store for the portable engine, with leases and fencing tokens, and a per-job stream of
 * research events any process can tail.
 */

export {
  createEventLog,
  type EventLog,
  type EventLogOptions,
  eventStreamResponse,
  type TailEnd,
  type TailOptions,
} from "./events.js";
export { createRedisStore, LeaseLostError, type RedisStoreOptions } from "./store.js";
