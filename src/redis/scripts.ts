/**
 * The store's Lua scripts, run by SHA (EVALSHA) and loaded again with EVAL when Redis
 * answers NOSCRIPT (after a restart or SCRIPT FLUSH).
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import acquireLease from "./commands/acquire-lease.lua";
import appendEvent from "./commands/append-event.lua";
import fencedSet from "./commands/fenced-set.lua";
import putReceipt from "./commands/put-receipt.lua";
import releaseKey from "./commands/release-key.lua";
import renewLease from "./commands/renew-lease.lua";

const sources = { acquireLease, appendEvent, fencedSet, putReceipt, releaseKey, renewLease };
export type ScriptName = keyof typeof sources;

const shas = Object.fromEntries(
  Object.entries(sources).map(([name, source]) => [name, createHash("sha1").update(source).digest("hex")]),
) as Record<ScriptName, string>;

export async function runScript(
  redis: Redis,
  name: ScriptName,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(shas[name], keys.length, ...keys, ...args);
  } catch (error) {
    if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
    return redis.eval(sources[name], keys.length, ...keys, ...args);
  }
}
