/**
 * A session that plays a script per connection, for the edges of the adapter contract that
 * `fake-engine.ts` (a well-behaved server) does not reach: cursorless events, notices,
 * empty reads, events after the terminal status, a connection that ends or drops anywhere.
 */
import { StreamInterruptedError } from "../../src/errors.js";
import type { EngineSession, MappedEvent, WireEvent } from "../../src/provider.js";

/** One step of a connection: a wire event, a network read of several (maybe none), or a drop. */
export type Step = WireEvent | readonly WireEvent[] | "drop";

/**
 * Wire data: "created", "running", "done" (completed), "" (maps to nothing), "t:<delta>",
 * "cost:<USD>" (usage with the provider's cost so far), "done+t:<delta>" (completed, then a
 * text in the same wire event, which the adapter spec does not allow).
 */
export function mapData(data: string): MappedEvent[] {
  if (data === "created")
    return [
      { type: "created", jobId: "job_1", provider: "openai", model: "openai:gpt-5.5-pro" },
      { type: "status", status: "running" },
    ];
  if (data === "running") return [{ type: "status", status: "running" }];
  if (data === "done") return [{ type: "status", status: "completed" }];
  if (data === "") return [];
  if (data.startsWith("cost:")) return [{ type: "usage", usage: { providerCostUSD: Number(data.slice(5)) } }];
  if (data.startsWith("done+t:"))
    return [
      { type: "status", status: "completed" },
      { type: "text", delta: data.slice(7) },
    ];
  return [{ type: "text", delta: data.slice(2) }];
}

/** A session whose n-th connection (0-based) plays `plan(n)`; ranked cursors are numbers. */
export function scripted(plan: (n: number) => Step[], options: { ranked: boolean }) {
  let jobId: string | undefined;
  const connects: (string | undefined)[] = [];
  const session: EngineSession & { connects: typeof connects } = {
    connects,
    get jobId() {
      return jobId;
    },
    resumable: true,
    ...(options.ranked && { cursorRank: (cursor: string) => Number(cursor) }),
    resumeState: () => ({}),
    async *connect({ cursor }) {
      connects.push(cursor);
      for (const step of plan(connects.length - 1)) {
        await Promise.resolve();
        if (step === "drop") throw new StreamInterruptedError("connection reset", { provider: "openai" });
        yield step;
      }
    },
    map(wire) {
      if (wire.data === "created") jobId = "job_1";
      return mapData(wire.data as string);
    },
  };
  return session;
}

/** A wire event; `cursor` undefined makes it cursorless. */
export const at = (cursor: string | undefined, data: string): WireEvent =>
  cursor === undefined ? { data } : { cursor, data };
