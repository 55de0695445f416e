/**
 * The Gemini engine: Deep Research agents over the Interactions API
 * (WIRE.md), steps schema, `Api-Revision: 2026-05-20`.
 */

import { SondeError } from "../../src/errors.js";
import type { JobStatus } from "../../src/events.js";
import type { CancelOutcome, ProviderContext, ResearchAdapter, SnapshotReport } from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import { FINAL_CURSOR } from "../../src/transport/final-cursor.js";
import { createHttpClient, type HttpClient } from "../../src/transport/http.js";
import { describeError } from "./errors.js";
import { countActivity, readReport, toUsageReport } from "./report.js";
import { buildCreateBody } from "./request.js";
import { type AttachPoint, GeminiSession } from "./session.js";
import { geminiSpec, type ResumeState, resumeOf } from "./spec.js";
import { API_REVISION, DEFAULT_BASE_URL, isTerminalStatus, WireInteraction } from "./wire.js";

const clients = new WeakMap<ProviderContext, HttpClient>();

/** One HTTP client per client: base URL, key header, schema revision, Google's error envelope. */
function clientFor(context: ProviderContext): HttpClient {
  let client = clients.get(context);
  if (!client) {
    client = createHttpClient({
      provider: "gemini",
      baseURL: context.settings.baseURL ?? DEFAULT_BASE_URL,
      headers: {
        "x-goog-api-key": context.settings.apiKey,
        "api-revision": API_REVISION,
      },
      fetch: context.fetch,
      clock: context.clock,
      classify: async (failure) => (await import("./http-errors.js")).classifyFailure(failure),
    });
    clients.set(context, client);
  }
  return client;
}

/** Interaction status → job status; the terminal ones Sonde has no name for end as incomplete. */
export function jobStatusOf(status: string | null | undefined): JobStatus {
  switch (status) {
    case "queued":
      return "queued";
    case "completed":
    case "failed":
    case "cancelled":
    case "incomplete":
      return status;
    case "budget_exceeded":
    case "requires_action":
      return "incomplete";
    default:
      return "running";
  }
}

/**
 * What the ref says was delivered. When it was taken in the middle of a batch
 * (`cursorOffset`), the undelivered tail of that batch is taken off: a batch lists its
 * text first, then its citations (see map.ts). When that batch is the stored result
 * (`FINAL_CURSOR`), it is replayed whole under the ref's cursor, where the core skips the
 * events already delivered: the counts then stop before it.
 */
function attachPoint(ref: JobRef, resume: ResumeState): AttachPoint {
  let text = resume.text ?? 0;
  let citations = resume.citations ?? 0;
  let results = resume.trail ?? 0;
  const last = resume.last?.cursor === ref.cursor ? resume.last : undefined;
  const ending = resume.endedAt !== undefined && ref.cursor === resume.endedAt;
  const replayed = ending && ref.cursor === FINAL_CURSOR && last !== undefined;
  if (ref.cursorOffset !== undefined && last) {
    if (replayed) {
      text -= last.text;
      citations -= last.citations;
      if (last.trailFrom !== undefined) results = last.trailFrom;
    } else {
      // A stored Interaction's batch lists its trail events first.
      const textSlot = (last.trail ?? 0) + (last.text > 0 ? 1 : 0);
      if (ref.cursorOffset < textSlot) text -= last.text;
      const delivered = Math.min(last.citations, Math.max(0, ref.cursorOffset - textSlot));
      citations -= last.citations - delivered;
    }
  }
  return {
    cursor: ref.cursor,
    text: Math.max(0, text),
    citations: Math.max(0, citations),
    results,
    ...(resume.endedAt !== undefined && { endedAt: resume.endedAt }),
    // The ref was taken on the job's ending, delivered whole, or on the stored result: it is replayed.
    ...(ending && (ref.cursorOffset === undefined || replayed) && { ended: true }),
  };
}

async function readInteraction(
  http: HttpClient,
  path: string,
  method: "get" | "post",
): Promise<{ raw: unknown; interaction: WireInteraction }> {
  const raw = await http[method](path, { headers: { accept: "application/json" } }).json();
  return { raw, interaction: WireInteraction.safeParse(raw, UNCOMPILED).data ?? {} };
}

const path = (ref: JobRef) => `interactions/${encodeURIComponent(ref.jobId)}`;

/** The Gemini engine: its spec (spec.ts) with the calls that need the Interactions protocol. */
export const geminiAdapter: ResearchAdapter = {
  ...geminiSpec,

  start(request, context) {
    return new GeminiSession({
      context,
      http: clientFor(context),
      model: request.modelInfo.id,
      includeThinking: request.reasoning?.includeThinking !== false,
      body: buildCreateBody(request),
    });
  },

  attach(ref, context) {
    const resume = resumeOf(ref);
    return new GeminiSession({
      context,
      http: clientFor(context),
      model: ref.model,
      includeThinking: resume.thinking !== false,
      jobId: ref.jobId,
      attach: attachPoint(ref, resume),
    });
  },

  async get(ref, context): Promise<SnapshotReport> {
    const { raw, interaction } = await readInteraction(clientFor(context), path(ref), "get");
    const status = jobStatusOf(interaction.status);
    const terminal = isTerminalStatus(interaction.status);
    const usage = interaction.usage
      ? toUsageReport(interaction.usage, countActivity(interaction.steps))
      : undefined;
    const snapshot: SnapshotReport = { provider: "gemini", model: ref.model, jobId: ref.jobId, status, raw };
    if (terminal) Object.assign(snapshot, readReport(interaction));
    if (usage) snapshot.usage = usage;
    if (status === "failed") {
      const { code, message } = describeError(
        interaction.errors?.[0] ?? interaction.error,
        "the interaction failed",
      );
      snapshot.error = { code, message };
    }
    return snapshot;
  },

  async cancel(ref, context): Promise<CancelOutcome> {
    const http = clientFor(context);
    let interaction: WireInteraction;
    try {
      interaction = (await readInteraction(http, `${path(ref)}/cancel`, "post")).interaction;
    } catch (error) {
      // Gemini refuses to cancel an interaction that is no longer running, and its cancel
      // method has answered 404 "Method not found" for interactions that exist
      // (googleapis/js-genai#1254, python-genai#1971): look at the interaction itself.
      const status = SondeError.isInstance(error) ? error.status : undefined;
      if (status !== 400 && status !== 404 && status !== 409 && status !== 412) throw error;
      const current = (await readInteraction(http, path(ref), "get")).interaction;
      if (status === 404 && !isTerminalStatus(current.status)) {
        return {
          outcome: "transport-only",
          detail: `Gemini's cancel method is not available for this interaction (${(error as Error).message}); it keeps running, and billing, until it ends (at most 60 minutes).`,
        };
      }
      if (isTerminalStatus(current.status)) {
        return {
          outcome: "already-terminal",
          finalStatus: jobStatusOf(current.status),
          detail: `The interaction had already ended (${current.status}) when the cancel arrived.`,
        };
      }
      return {
        outcome: "pending",
        detail: `Gemini refused the cancel (${(error as Error).message}) and the interaction still reports ${current.status ?? "no status"}; try again or check with research.get(ref).`,
      };
    }
    if (interaction.status === "cancelled") return { outcome: "cancelled", finalStatus: "cancelled" };
    if (isTerminalStatus(interaction.status)) {
      return {
        outcome: "already-terminal",
        finalStatus: jobStatusOf(interaction.status),
        detail: `The interaction finished (${interaction.status}) before the cancel took effect.`,
      };
    }
    return {
      outcome: "pending",
      detail: `Gemini accepted the cancel but the interaction still reports ${interaction.status ?? "no status"}; check again with research.get(ref).`,
    };
  },
};
