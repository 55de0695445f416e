/**
 * The same cut stream read twice: iterated, then with `result()` alone (which joins a read's
 * text deltas: src/protocols/responses/delta-run.ts). Both must end with the same partial
 * result and the same ref; returns what the iterated job delivered, and the ref.
 */
import { expect } from "vitest";
import type { ResearchEvent } from "../../src/events.js";
import type { ResearchJob } from "../../src/job.js";
import type { JobRef } from "../../src/ref.js";

/** `serve` sets the server up for one read (the same cut each time); `start` starts the job. */
export async function cutReadBothWays(
  serve: () => void,
  start: () => ResearchJob,
): Promise<{ seen: ResearchEvent[]; ref: JobRef }> {
  serve();
  const iterated = start();
  const seen: ResearchEvent[] = [];
  for await (const event of iterated) seen.push(event);
  const iteratedError = (await iterated.result().catch((e: unknown) => e)) as { partial: unknown };
  serve();
  const alone = start();
  const error = (await alone.result().catch((e: unknown) => e)) as { partial: unknown };
  expect(error.partial).toEqual(iteratedError.partial);
  const ref = alone.toRef();
  expect(ref).toEqual(iterated.toRef());
  return { seen, ref };
}
