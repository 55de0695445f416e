/**
 * A ref's `resume` (what an adapter's `resumeState()` wrote), read back against the
 * adapter's schema. A bad field is named, never read as "nothing delivered": that would
 * deliver events twice. Older refs without it still attach (every field is optional).
 */
import { z } from "zod";
import { InvalidRefError } from "./errors.js";
import { lazySchema } from "./lazy-schema.js";
import type { JobRef } from "./ref.js";
import { UNCOMPILED } from "./transport/fast-json.js";

/** What the last mapped batch held, for a ref taken part-way through it (`cursorOffset`). */
export const LastBatch = lazySchema(() => {
  const counter = z.number().int().nonnegative();
  return z.object({
    cursor: z.string(),
    text: counter,
    citations: counter,
    trail: counter.optional(),
  });
});

export function readResumeState<T extends z.ZodType>(ref: JobRef, schema: T): z.infer<T> {
  const parsed = schema.safeParse(ref.resume, UNCOMPILED);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ["resume", ...issue.path.map(String)].join(".");
    throw new InvalidRefError(field, `Invalid ref: field "${field}": ${issue.message}.`);
  }
  return parsed.data;
}
