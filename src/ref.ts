import { z } from "zod";
import { InvalidRefError } from "./errors.js";
import { ProviderName } from "./events.js";

/**
 * A job's portable handle: plain JSON, safe to store, holds no secret.
 * `cursor` is the provider resume token of the last wire event whose events were
 * (at least partly) delivered; `cursorOffset` says how many of that wire event's
 * events were delivered when fewer than all were.
 */
export const JobRef = z.strictObject({
  v: z.literal(1),
  provider: ProviderName,
  model: z.string().min(1),
  jobId: z.string().min(1),
  cursor: z.string().optional(),
  cursorOffset: z.number().int().positive().optional(),
  createdAt: z.iso.datetime({ offset: true }),
  deadlineAt: z.iso.datetime({ offset: true }).optional(),
  /** Only what the engine needs to continue; never a key, header or secret. */
  resume: z.record(z.string(), z.unknown()),
});
export type JobRef = z.infer<typeof JobRef>;

/** Validates anything that claims to be a ref (object or JSON text); names the first bad field. */
export function parseRef(input: unknown): JobRef {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      throw new InvalidRefError("(root)", "The ref is not valid JSON. Pass the object job.toRef() returned.");
    }
  }
  if (value && typeof value === "object" && "v" in value && (value as { v: unknown }).v !== 1) {
    throw new InvalidRefError(
      "v",
      `Unsupported ref version ${JSON.stringify((value as { v: unknown }).v)}: this Sonde reads version 1 refs. Upgrade Sonde to attach it.`,
    );
  }
  const parsed = JobRef.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? issue.path.join(".") : "(root)";
    throw new InvalidRefError(
      field,
      `Invalid ref: field "${field}": ${issue.message}. Pass the object job.toRef() returned.`,
    );
  }
  return parsed.data;
}
