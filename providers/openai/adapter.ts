/**
 * The OpenAI engine: deep research as background Responses (`POST /v1/responses` with
 * `background: true`), streamed and resumed where the model streams, polled where it
 * does not, cancelled with `POST /v1/responses/{id}/cancel`.
 */
import { z } from "zod";
import { findModel } from "../../catalog/index.js";
import type { ModelInfo } from "../../catalog/schema.js";
import { InvalidRefError, InvalidRequestError, ProviderUnavailableError } from "../../src/errors.js";
import { isTerminal, type JobStatus } from "../../src/events.js";
import {
  type CancelOutcome,
  type ProviderContext,
  type ResearchAdapter,
  type SnapshotReport,
  specVersion,
} from "../../src/provider.js";
import type { JobRef } from "../../src/ref.js";
import { openaiHttp } from "./http.js";
import { jobStatusOf, reportOf, usageOf } from "./map.js";
import { createBody, supportedOptions, validateRequest } from "./request.js";
import { OpenAISession } from "./session.js";
import { WireResponse } from "./wire.js";

/** What `resumeState()` writes into a ref; older refs without it still attach. */
const ResumeState = z.object({
  reportLength: z.number().int().nonnegative().optional(),
  citations: z.number().int().nonnegative().optional(),
  trail: z.number().int().nonnegative().optional(),
  includeThinking: z.boolean().optional(),
  polling: z.boolean().optional(),
  endedAt: z.string().optional(),
  last: z
    .object({
      cursor: z.string(),
      text: z.number().int().nonnegative(),
      citations: z.number().int().nonnegative(),
      trail: z.number().int().nonnegative().optional(),
    })
    .optional(),
});

function modelOf(ref: JobRef): ModelInfo {
  const info = findModel(ref.model);
  if (info?.provider !== "openai")
    throw new InvalidRefError("model", `The ref names "${ref.model}", which is not an OpenAI model.`);
  return info;
}

function resumeOf(ref: JobRef): z.infer<typeof ResumeState> {
  const parsed = ResumeState.safeParse(ref.resume);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ["resume", ...issue.path].join(".");
    throw new InvalidRefError(field, `Invalid ref: field "${field}": ${issue.message}.`);
  }
  return parsed.data;
}

/**
 * What was delivered before the ref's position. `resume` counts everything its last batch
 * mapped to; a ref taken part-way through that batch (`cursorOffset`) had delivered only
 * its first events (text first, then citations: see map.ts), so the rest is taken off.
 * When that batch ended the job, it is replayed whole under the ref's cursor, where the
 * core skips the events already delivered: the counts then stop before it (`atEnd`).
 */
function attachPoint(ref: JobRef, resume: z.infer<typeof ResumeState>) {
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

async function retrieve(ref: JobRef, context: ProviderContext): Promise<WireResponse> {
  const json = await openaiHttp(context)
    .get(`responses/${encodeURIComponent(ref.jobId)}`)
    .json();
  const parsed = WireResponse.safeParse(json);
  if (!parsed.success)
    throw new ProviderUnavailableError("openai: the response could not be read (no Response object).", {
      provider: "openai",
    });
  return parsed.data;
}

function cancelOutcome(status: JobStatus): CancelOutcome {
  if (status === "cancelled") return { outcome: "cancelled", finalStatus: "cancelled" };
  if (isTerminal(status))
    return {
      outcome: "already-terminal",
      finalStatus: status,
      detail: `The job had already ended (${status}) when the cancel arrived: it finished first.`,
    };
  return {
    outcome: "pending",
    detail: `OpenAI took the cancel but the job is still ${status}; get() or attach the ref to see it stop.`,
  };
}

export const openaiAdapter: ResearchAdapter = {
  specVersion,
  provider: "openai",
  supports: supportedOptions,

  validate: (request) => validateRequest(request),

  start(request, context) {
    return new OpenAISession({
      context,
      model: request.modelInfo,
      catalogId: request.modelInfo.id,
      includeThinking: request.reasoning?.includeThinking !== false,
      body: createBody(request),
    });
  },

  attach(ref, context) {
    const resume = resumeOf(ref);
    return new OpenAISession({
      context,
      model: modelOf(ref),
      catalogId: ref.model,
      includeThinking: resume.includeThinking !== false,
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
  },

  /** One GET. The report and its citations are included once the job has ended. */
  async get(ref, context): Promise<SnapshotReport> {
    const response = await retrieve(ref, context);
    const status = jobStatusOf(response.status);
    const final = reportOf(response);
    const ended = isTerminal(status);
    return {
      provider: "openai",
      model: ref.model,
      jobId: response.id,
      status,
      ...(ended && final.text && { report: final.text, citations: final.citations }),
      ...((response.usage || final.searchIds.length > 0) && {
        usage: usageOf(response.usage, final.searchIds.length),
      }),
      ...(response.error && {
        error: { code: response.error.code ?? "failed", message: response.error.message ?? "" },
      }),
      raw: response,
    };
  },

  async cancel(ref, context): Promise<CancelOutcome> {
    let response: WireResponse;
    try {
      const json = await openaiHttp(context)
        .post(`responses/${encodeURIComponent(ref.jobId)}/cancel`)
        .json();
      const parsed = WireResponse.safeParse(json);
      // Cancel answers with the Response; without one, ask for it.
      response = parsed.success ? parsed.data : await retrieve(ref, context);
    } catch (error) {
      // A refused cancel (e.g. the job already ended): say what state it is in.
      if (!InvalidRequestError.isInstance(error)) throw error;
      response = await retrieve(ref, context);
      if (!isTerminal(jobStatusOf(response.status))) throw error;
    }
    return cancelOutcome(jobStatusOf(response.status));
  },
};
