/// <reference path="./lua.d.ts" />
/**
 * Lua scripts run by SHA (EVALSHA), loaded again with EVAL when Redis answers NOSCRIPT
 * (after a restart or SCRIPT FLUSH).
 */
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import acquireLease from "./commands/acquire-lease.lua";
import appendBatch from "./commands/append-batch.lua";
import appendEvent from "./commands/append-event.lua";
import appendResearchEvent from "./commands/append-research-event.lua";
import fencedSet from "./commands/fenced-set.lua";
import putReceipt from "./commands/put-receipt.lua";
import releaseKey from "./commands/release-key.lua";
import renewLease from "./commands/renew-lease.lua";
import tailState from "./commands/tail-state.lua";

export type LuaScript = (redis: Redis, keys: string[], args: (string | number)[]) => Promise<unknown>;

export function luaScript(source: string): LuaScript {
  const sha = createHash("sha1").update(source).digest("hex");
  return async (redis, keys, args) => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith("NOSCRIPT")) throw error;
      return redis.eval(source, keys.length, ...keys, ...args);
    }
  };
}

/** `source` with the `appendBatch` function (commands/append-batch.lua) defined in front of it. */
export const withAppendBatch = (source: string) => `${appendBatch}\n${source}`;

const scripts = {
  acquireLease: luaScript(acquireLease),
  appendEvent: luaScript(appendEvent),
  appendResearchEvent: luaScript(withAppendBatch(appendResearchEvent)),
  fencedSet: luaScript(fencedSet),
  putReceipt: luaScript(putReceipt),
  releaseKey: luaScript(releaseKey),
  renewLease: luaScript(renewLease),
  tailState: luaScript(tailState),
};
export type ScriptName = keyof typeof scripts;

export const runScript = (redis: Redis, name: ScriptName, keys: string[], args: (string | number)[]) =>
  scripts[name](redis, keys, args);
