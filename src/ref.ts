import { z } from "zod";
import { InvalidRefError } from "./errors.js";
import { ProviderName } from "./events.js";
import { lazySchema } from "./lazy-schema.js";
import { UNCOMPILED } from "./transport/fast-json.js";

/**
 * Bounds on a ref read from outside (a database row, a request body, a file): far above
 * what any engine writes (a few hundred bytes), far below what could hurt a process.
 */
export const refLimits = {
  /** The serialized ref, in characters (also checked on a string before `JSON.parse`). */
  maxChars: 65_536,
  /** Nesting below the ref object itself (`resume.a.b` is depth 3). */
  maxDepth: 12,
  jobId: 1_024,
  model: 256,
  cursor: 4_096,
  owner: 256,
  /** Any string inside `resume`. */
  resumeString: 8_192,
} as const;

/** Keys that would reach an object's prototype once the ref is copied or merged. */
const forbiddenKeys = new Set(["__proto__", "constructor", "prototype"]);

/** The credential tag format (see ref-binding.ts): a version, then 24 hex digits. */
const CredentialTag = lazySchema(() => z.string().regex(/^h1\.[0-9a-f]{24}$/, "not a Sonde credential tag"));

/**
 * A job's portable handle: plain JSON, safe to store, holds no secret.
 * `cursor` is the provider resume token of the last wire event whose events were
 * (at least partly) delivered; `cursorOffset` says how many of that wire event's
 * events were delivered when fewer than all were. `credential` binds the ref to the
 * key that created it (a keyed tag, never the key) and `owner` to the application's
 * tenant or user; refs without them (older Sonde, keyless engines) still attach.
 */
export const JobRef = lazySchema(() =>
  z.strictObject({
    v: z.literal(1),
    provider: ProviderName,
    model: z.string().min(1).max(refLimits.model),
    jobId: z.string().min(1).max(refLimits.jobId),
    cursor: z.string().max(refLimits.cursor).optional(),
    cursorOffset: z.number().int().positive().optional(),
    createdAt: z.iso.datetime({ offset: true }),
    deadlineAt: z.iso.datetime({ offset: true }).optional(),
    credential: CredentialTag.optional(),
    owner: z.string().min(1).max(refLimits.owner).optional(),
    /** Only what the engine needs to continue; never a key, header or secret. */
    resume: z.record(z.string(), z.unknown()),
  }),
);
export type JobRef = z.infer<typeof JobRef>;

const invalid = (field: string, problem: string) =>
  new InvalidRefError(
    field,
    `Invalid ref: field "${field}": ${problem}. Pass the object job.toRef() returned.`,
  );

/**
 * Walks an untrusted value once before zod sees it: bounded depth and size, JSON values
 * only, no prototype-reaching own keys at any level. Cycles end at the depth limit.
 */
function checkShape(value: unknown): void {
  let chars = 0;
  const visit = (node: unknown, path: string[], depth: number): void => {
    const field = path.length ? path.join(".") : "(root)";
    if (depth > refLimits.maxDepth) throw invalid(field, `nested deeper than ${refLimits.maxDepth} levels`);
    if (typeof node === "string") {
      chars += node.length + 2;
      const limit = path[0] === "resume" ? refLimits.resumeString : refLimits.maxChars;
      if (node.length > limit)
        throw invalid(field, `a string of ${node.length} characters (at most ${limit})`);
    } else if (typeof node === "number") {
      if (!Number.isFinite(node)) throw invalid(field, "not a finite number");
      chars += 8;
    } else if (node === null || node === undefined || typeof node === "boolean") {
      chars += 5;
    } else if (typeof node === "object") {
      const isArray = Array.isArray(node);
      if (
        !isArray &&
        Object.getPrototypeOf(node) !== Object.prototype &&
        Object.getPrototypeOf(node) !== null
      )
        throw invalid(field, "not a plain JSON object");
      for (const key of Reflect.ownKeys(node)) {
        if (typeof key === "symbol") throw invalid(field, "a symbol key");
        if (isArray && key === "length") continue;
        if (forbiddenKeys.has(key))
          throw invalid([...path, key].join("."), `the key "${key}" is not allowed`);
        chars += key.length + 4;
        if (chars > refLimits.maxChars) throw invalid(field, `larger than ${refLimits.maxChars} characters`);
        visit((node as Record<string, unknown>)[key], [...path, key], depth + 1);
      }
    } else {
      throw invalid(field, `a ${typeof node}, not a JSON value`);
    }
    if (chars > refLimits.maxChars) throw invalid(field, `larger than ${refLimits.maxChars} characters`);
  };
  visit(value, [], 0);
}

/**
 * Validates anything that claims to be a ref (object or JSON text); names the first bad
 * field. A ref is untrusted input: its size, depth and keys are checked before parsing.
 * @example
 * ```ts
 * import { parseRef } from "sonde";
 *
 * const ref = parseRef(savedText); // throws InvalidRefError naming the first bad field
 * const job = client.research.attach(ref);
 * ```
 */
export function parseRef(input: unknown): JobRef {
  let value = input;
  if (typeof input === "string") {
    if (input.length > refLimits.maxChars)
      throw invalid("(root)", `a ${input.length}-character string (at most ${refLimits.maxChars})`);
    try {
      value = JSON.parse(input);
    } catch {
      throw new InvalidRefError("(root)", "The ref is not valid JSON. Pass the object job.toRef() returned.");
    }
  }
  // The version first: a newer Sonde's ref gets an "upgrade" message, not a shape complaint.
  if (value && typeof value === "object" && Object.hasOwn(value, "v") && (value as { v: unknown }).v !== 1) {
    const v = (value as { v: unknown }).v;
    throw new InvalidRefError(
      "v",
      `Unsupported ref version ${typeof v === "number" ? v : typeof v}: this Sonde reads version 1 refs. Upgrade Sonde to attach it.`,
    );
  }
  checkShape(value);
  const parsed = JobRef.safeParse(value, UNCOMPILED);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? issue.path.join(".") : "(root)";
    throw invalid(field, issue.message);
  }
  // Exactly what it will be after the next save and load (-0 becomes 0, undefined goes).
  return JSON.parse(JSON.stringify(parsed.data)) as JobRef;
}
