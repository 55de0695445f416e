/**
 * The hosted `agents.deep_research` job API as it comes off the wire
 * (WIRE.md). The spec leaves the error body and where the
 * result sits in a job unspecified, so these schemas are lenient and the mapper looks
 * in the documented place (`result`) first, then at the top level.
 */
import { z } from "zod";
import { UNCOMPILED } from "../../src/transport/fast-json.js";

const amount = z.number().nonnegative().nullish().catch(undefined);

/** The invoke answer: a queued job with its poll URL and the amount held for it. */
export const Invocation = z.lazy(() =>
  z.object({
    job_id: z.string().min(1),
    status: z.string().nullish(),
    agent_id: z.string().nullish(),
    poll_url: z.string().nullish(),
    estimated_cost_usd: amount,
    created_at: z.string().nullish(),
  }),
);
export type Invocation = z.infer<typeof Invocation>;

/** `queued` → `running` → `completed` | `failed` | `canceled` (one l). */
export const Job = z.lazy(() =>
  z.object({
    job_id: z.string().nullish(),
    status: z.string(),
    estimated_cost_usd: amount,
    result: z.unknown().optional(),
    error: z.unknown().optional(),
    error_message: z.string().nullish(),
    message: z.string().nullish(),
  }),
);
export type Job = z.infer<typeof Job>;

export const Result = z.lazy(() =>
  z.object({
    content: z.string().nullish(),
    citations: z.array(z.unknown()).nullish().catch(undefined),
    /** The final charge; a canceled job that consumed work carries only this. */
    charge_usd: amount,
  }),
);
export type Result = z.infer<typeof Result>;

export const HostedCitation = z.lazy(() =>
  z.object({
    url: z.string(),
    title: z.string().nullish(),
    snippet: z.string().nullish(),
  }),
);

export const ErrorDetail = z.lazy(() =>
  z.object({
    code: z.union([z.string(), z.number()]).nullish(),
    message: z.string().nullish(),
  }),
);

const lenientCode = z.lazy(() => z.union([z.string(), z.number()]).nullish().catch(undefined));

/**
 * An HTTP error body. The service does not specify one (WIRE.md "Errors"), so the common
 * shapes are all read: `{error: {code, message}}`, `{error: "..."}`, `{code, message}`, `{detail}`.
 */
export const ErrorBody = z.lazy(() =>
  z.looseObject({
    error: z
      .union([z.string(), z.looseObject({ code: lenientCode, type: lenientCode })])
      .nullish()
      .catch(undefined),
    code: lenientCode,
    type: lenientCode,
  }),
);

/** The provider's own code in an error body, if it names one. */
export function errorBodyCode(body: unknown): string | undefined {
  const parsed = ErrorBody.safeParse(body, UNCOMPILED);
  if (!parsed.success) return undefined;
  const inner = typeof parsed.data.error === "object" ? parsed.data.error : undefined;
  const code = inner?.code ?? inner?.type ?? parsed.data.code ?? parsed.data.type;
  return code === null || code === undefined ? undefined : String(code);
}
