/**
 * The Gemini engine's synchronous part (src/lazy-engine.ts): catalog, options, request checks,
 * and the reading of a ref's `resume`, which `attach()` checks at once.
 */
import { z } from "zod";
import { gemini } from "../../catalog/gemini.js";
import type { EngineSpec } from "../../src/lazy-engine.js";
import { lazySchema } from "../../src/lazy-schema.js";
import { specVersion } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { LastBatch, readResumeState } from "../../src/resume-state.js";
import { checkRequest } from "./request.js";
import { geminiSettingsSchema } from "./settings.js";

const ResumeState = lazySchema(() =>
  z.object({
    text: z.number().int().nonnegative().optional(),
    citations: z.number().int().nonnegative().optional(),
    trail: z.number().int().nonnegative().optional(),
    last: LastBatch.extend({ trailFrom: z.number().int().nonnegative().optional() }).optional(),
    thinking: z.boolean().optional(),
    endedAt: z.string().optional(),
  }),
);
export type ResumeState = z.infer<typeof ResumeState>;

/** The ref's `resume`, validated: a bad field is named, never read as "nothing delivered". */
export const resumeOf = (ref: JobRef): ResumeState => readResumeState(ref, ResumeState);

/**
 * Gemini Deep Research agents (`gemini:deep-research-preview-04-2026`,
 * `gemini:deep-research-max-preview-04-2026`) as background, streamed, stored interactions.
 * Honours `instructions`, `asOf` and `output` (as the system instruction), `tools`,
 * `reasoning` and `previousJobId`; anything else is rejected before the network.
 */
export const geminiSpec: EngineSpec = {
  specVersion,
  models: gemini,
  provider: "gemini",
  settingsSchema: geminiSettingsSchema,
  supports: ["instructions", "asOf", "output", "tools", "reasoning", "previousJobId"],
  validate: checkRequest,
  session: { resumable: true },
  checkAttach: (ref) => void resumeOf(ref),
};
