import type { Citation } from "../../src/events.js";
import type { Logger, MappedEvent } from "../../src/provider.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import { PortableWire } from "./wire/events.js";

const defined = <T extends object>(value: T): T =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;

/** Maps one persisted portable wire event onto research events. Unknown shapes are skipped. */
export function mapWire(data: unknown, logger: Logger): MappedEvent[] {
  const parsed = PortableWire.safeParse(data, UNCOMPILED);
  if (!parsed.success) {
    logger.debug("portable: skipping an unknown wire event", {
      type: (data as { type?: unknown } | null)?.type,
    });
    return [];
  }
  const wire = parsed.data;
  switch (wire.type) {
    case "created":
      return [{ type: "created", jobId: wire.jobId, provider: "portable", model: wire.model }];
    case "status":
      return [{ type: "status", status: wire.status }];
    case "phase":
      return [{ type: "phase", phase: wire.phase }];
    case "search":
      return [
        defined({
          type: "search" as const,
          action: wire.action,
          query: wire.query ?? undefined,
          url: wire.url ?? undefined,
          state: wire.state,
        }),
      ];
    case "text":
      return [{ type: "text", delta: wire.delta }];
    case "citation":
      return [{ type: "citation", citation: defined(wire.citation) as Citation }];
    case "usage":
      return [{ type: "usage", usage: defined(wire.usage) as Record<string, number> }];
    case "gap":
      return [{ type: "gap", gap: defined(wire.gap) as { kind: typeof wire.gap.kind; detail: string } }];
  }
}
