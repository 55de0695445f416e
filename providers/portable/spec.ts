/**
 * The portable engine's synchronous part (src/lazy-engine.ts): catalog, request and config
 * checks, ref checks. The adapter (job store, sessions, event mapping) loads with the first
 * job, and the research loop with the first run (adapter.ts).
 */
import { portable } from "../../catalog/portable.js";
import { InvalidRefError, JobNotFoundError } from "../../src/errors.js";
import type { EngineSpec } from "../../src/lazy-engine.js";
import { type ProviderContext, specVersion } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { checkObjects, validateConfig } from "./checks.js";

/** Jobs and their receipts are kept this long (client clock). */
export const RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

const JOB_ID = /^pj_[A-Za-z0-9_-]{8,100}$/;

export function checkJobId(ref: JobRef): void {
  if (!JOB_ID.test(ref.jobId))
    throw new InvalidRefError("jobId", `Invalid ref: "${ref.jobId}" is not a portable job id.`);
}

/** Cursors are log indexes. */
export const logRank = (cursor: string): number | undefined =>
  /^\d+$/.test(cursor) ? Number(cursor) : undefined;

/**
 * The portable (local) research engine, ARCHITECTURE.md, "The portable engine": `portable:<chat>/<model>` over any
 * OpenAI-compatible chat endpoint, a pluggable search backend and fetcher, with a durable
 * job store; `portable:demo/offline` runs the same loop offline with no key.
 */
export const portableSpec: EngineSpec = {
  specVersion,
  models: portable,
  provider: "portable",
  // No settingsSchema here: `portableSettingsSchema` is checked field by field when a job starts
  // (validateConfig), so a client with a bad portable section still serves the other engines.
  supports: ["instructions", "asOf", "output", "tools", "sources", "budget", "idempotencyKey"],

  validate(request, context) {
    const documents = request.sources?.documents ?? [];
    const web = request.sources?.web ?? documents.length === 0;
    validateConfig(request.providerModel, context.extras, web && (request.budget?.searches ?? 1) > 0);
  },

  session: { resumable: true, local: true, cursorRank: logRank },

  checkAttach(ref: JobRef, context: ProviderContext) {
    checkJobId(ref);
    if (Date.parse(ref.createdAt) + RETENTION_MS <= context.clock().getTime()) {
      throw new JobNotFoundError(
        `portable: job ${ref.jobId} was created on ${ref.createdAt} and has expired (jobs and their receipts are kept seven days).`,
        { provider: "portable" },
      );
    }
    checkObjects(context.extras);
  },
};
