/**
 * What a Responses-protocol engine needs before its first request (see src/lazy-engine.ts):
 * its sessions' traits and the reading of a ref's `resume`, which `attach()` checks at once.
 * The session, mapper and wire schemas (adapter.ts) load on first use.
 */
import { z } from "zod";
import type { EngineSpec } from "../../lazy-engine.js";
import { lazySchema } from "../../lazy-schema.js";
import { specVersion } from "../../provider.js";
import type { JobRef } from "../../ref.js";
import { LastBatch, readResumeState } from "../../resume-state.js";

/** What `resumeState()` writes into a ref; older refs without it still attach. */
const ResumeState = lazySchema(() =>
  z.object({
    reportLength: z.number().int().nonnegative().optional(),
    citations: z.number().int().nonnegative().optional(),
    trail: z.number().int().nonnegative().optional(),
    includeThinking: z.boolean().optional(),
    polling: z.boolean().optional(),
    endedAt: z.string().optional(),
    pollOnly: z.boolean().optional(),
    last: LastBatch.optional(),
  }),
);
export type ResumeState = z.infer<typeof ResumeState>;

/** The ref's `resume`, validated: a bad field is an `InvalidRefError` naming it. */
export const resumeOf = (ref: JobRef): ResumeState => readResumeState(ref, ResumeState);

/** `sequence_number` orders events; it only increases (gaps allowed). */
export function sequenceRank(cursor: string): number | undefined {
  const rank = Number(cursor);
  return cursor.trim() !== "" && Number.isFinite(rank) ? rank : undefined;
}

/** A Responses engine's spec from its own fields (provider, models, options, checks). */
export function responsesSpec(
  fields: Omit<EngineSpec, "specVersion" | "session" | "checkAttach">,
): EngineSpec {
  return {
    specVersion,
    ...fields,
    // Background responses outlive the connection: resume or poll.
    session: { resumable: true, cursorRank: sequenceRank },
    checkAttach: (ref) => void resumeOf(ref),
  };
}
