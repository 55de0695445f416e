/**
 * The JSON the model is asked to return for each task (see prompts.ts): plan, extract,
 * check and write. Unknown keys pass; what the loop relies on is required.
 */
import { z } from "zod";

const text = z.string().trim().min(1);

export const PlanOutput = z.lazy(() => z.object({ queries: z.array(text).min(1) }));
export type PlanOutput = z.infer<typeof PlanOutput>;

export const ExtractOutput = z.lazy(() =>
  z.object({
    findings: z.array(z.object({ source: text, claim: text, quote: text })),
  }),
);
export type ExtractOutput = z.infer<typeof ExtractOutput>;

export const CheckOutput = z.lazy(() =>
  z.object({
    checks: z.array(
      z.object({
        id: text,
        verdict: z.enum(["supported", "contradicted", "unsupported"]),
        reason: z.string().nullish(),
      }),
    ),
  }),
);
export type CheckOutput = z.infer<typeof CheckOutput>;

const NumberLike = z.lazy(() => z.union([z.number(), z.string().trim().min(1)]));

export const DerivedInput = z.lazy(() =>
  z.object({
    finding: text,
    value: NumberLike,
    unit: z.string().nullish(),
    date: z.string().nullish(),
  }),
);
export type DerivedInput = z.infer<typeof DerivedInput>;

export const DerivedNumber = z.lazy(() =>
  z.object({
    id: text,
    formula: text,
    inputs: z.record(z.string(), DerivedInput),
    result: NumberLike,
    unit: z.string().nullish(),
  }),
);
export type DerivedNumber = z.infer<typeof DerivedNumber>;

export const WriteOutput = z.lazy(() =>
  z.object({
    title: z.string().nullish(),
    sections: z.array(z.object({ heading: z.string().nullish(), paragraphs: z.array(z.string()) })).min(1),
    derived: z.array(DerivedNumber).nullish(),
  }),
);
export type WriteOutput = z.infer<typeof WriteOutput>;
