/**
 * A Responses-protocol engine as a `ResearchAdapter`: start and attach a background
 * response (with the ref's resume state), get one snapshot, cancel. What differs per
 * provider (request body, validation, paths, dialect) comes from its options.
 */
import { findIn } from "../../../catalog/lookup.js";
import type { ModelInfo } from "../../../catalog/schema.js";
import { InvalidRefError } from "../../errors.js";
import type { EngineSpec } from "../../lazy-engine.js";
import type { ProviderContext, ResearchAdapter, ResolvedRequest } from "../../provider.js";
import type { JobRef } from "../../ref.js";
import type { ResponsesEngine } from "./dialect.js";
import { ResponsesSession } from "./session.js";
import { type ResumeState, resumeOf } from "./spec.js";

export interface ResponsesAdapterOptions {
  engine: ResponsesEngine;
  createBody(request: ResolvedRequest, context: ProviderContext): Record<string, unknown>;
  /**
   * How long cancel() polls for `cancelled` when the cancel answer is an ack rather than
   * the final Response (Perplexity). 0: one look.
   */
  cancelWaitMs?(context: ProviderContext): number;
  /** Poll instead of streaming although the model streams (a provider setting). */
  pollOnly?(context: ProviderContext): boolean;
}

/**
 * What was delivered before the ref's position. `resume` counts everything its last batch
 * mapped to; a ref taken part-way through that batch (`cursorOffset`) had delivered only
 * its first events (text first, then citations: see mapper.ts), so the rest is taken off.
 * When that batch ended the job, it is replayed whole under the ref's cursor, where the
 * core skips the events already delivered: the counts then stop before it (`atEnd`).
 */
function attachPoint(ref: JobRef, resume: ResumeState) {
  let reportLength = resume.reportLength ?? 0;
  let citations = resume.citations ?? 0;
  let trail = resume.trail ?? 0;
  const last = resume.last?.cursor === ref.cursor ? resume.last : undefined;
  const ending = resume.endedAt !== undefined && ref.cursor === resume.endedAt;
  // An older ref without `last` cannot say what of its ending was delivered: its ending is not replayed.
  const atEnd = ending && (ref.cursorOffset === undefined || last !== undefined);
  if (ref.cursorOffset !== undefined && last) {
    const lastTrail = last.trail ?? 0;
    if (atEnd) {
      reportLength -= last.text;
      citations -= last.citations;
      trail -= lastTrail;
    } else {
      // A batch lists its trail events first, then its text, then its citations.
      trail -= lastTrail - Math.min(lastTrail, ref.cursorOffset);
      const textSlot = lastTrail + (last.text > 0 ? 1 : 0);
      if (ref.cursorOffset < textSlot) reportLength -= last.text;
      citations -= last.citations - Math.min(last.citations, Math.max(0, ref.cursorOffset - textSlot));
    }
  }
  return {
    delivered: {
      reportLength: Math.max(0, reportLength),
      citations: Math.max(0, citations),
      trail: Math.max(0, trail),
    },
    atEnd,
  };
}

/** The adapter of a Responses engine: its spec (spec.ts) with the calls that need the protocol. */
export function responsesAdapter(spec: EngineSpec, options: ResponsesAdapterOptions): ResearchAdapter {
  const { engine } = options;
  const { dialect } = engine;
  const provider = dialect.provider;

  const modelOf = (ref: JobRef): ModelInfo => {
    const info = findIn(spec.models, ref.model);
    if (info?.provider !== provider)
      throw new InvalidRefError(
        "model",
        `The ref names "${ref.model}", which is not a ${dialect.label} model.`,
      );
    return info;
  };

  return {
    ...spec,
    start(request, context) {
      return new ResponsesSession({
        engine,
        context,
        model: request.modelInfo,
        catalogId: request.modelInfo.id,
        includeThinking: request.reasoning?.includeThinking !== false,
        ...(options.pollOnly?.(context) && { pollOnly: true }),
        body: options.createBody(request, context),
      });
    },

    attach: (ref, context) => attachSession(engine, ref, context, modelOf(ref)),

    // One look at a job (a GET) and a cancel are rare paths: each loads with its first use.
    get: async (ref, context) => (await import("./snapshot.js")).getResponse(engine, ref, context),
    cancel: async (ref, context) =>
      (await import("./cancel.js")).cancelResponse(
        engine,
        ref,
        context,
        options.cancelWaitMs?.(context) ?? 0,
      ),
  };
}

function attachSession(engine: ResponsesEngine, ref: JobRef, context: ProviderContext, model: ModelInfo) {
  const resume = resumeOf(ref);
  return new ResponsesSession({
    engine,
    context,
    model,
    catalogId: ref.model,
    includeThinking: resume.includeThinking !== false,
    ...(resume.pollOnly && { pollOnly: true }),
    attached: {
      jobId: ref.jobId,
      cursor: ref.cursor,
      ...attachPoint(ref, resume),
      resume: {
        reportLength: resume.reportLength ?? 0,
        citations: resume.citations ?? 0,
        trail: resume.trail ?? 0,
        ...(resume.last && { last: { ...resume.last, trail: resume.last.trail ?? 0 } }),
      },
      ...(resume.polling && { polling: true }),
      ...(resume.endedAt !== undefined && { endedAt: resume.endedAt }),
    },
  });
}
