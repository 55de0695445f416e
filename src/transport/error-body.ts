/**
 * Reading a failed response's body: loaded on the first failure (see http.ts), so its
 * schemas are not built on the way to a successful request.
 */
import { z } from "zod";
import { UNCOMPILED } from "./fast-json.js";

// Error bodies seen across providers, read leniently: a field of an unexpected type is dropped, never thrown on.
const code = z.union([z.string(), z.number()]).nullish().catch(undefined);
const text = z.string().nullish().catch(undefined);
const ErrorFields = z.looseObject({ message: text, code, type: code, status: code });
/** FastAPI-style validation errors (Perplexity 422): `{"detail": [{loc, msg, type}]}`. */
const ValidationIssue = z.looseObject({ loc: z.array(z.unknown()).nullish().catch(undefined), msg: text });
const ErrorEnvelope = z.looseObject({
  ...ErrorFields.shape,
  error: z.union([z.string(), ErrorFields]).nullish().catch(undefined),
  detail: z
    .union([z.string(), z.array(z.unknown())])
    .nullish()
    .catch(undefined),
});

export function describe(body: unknown): { message: string | undefined; code: string | undefined } {
  if (typeof body === "string") return { message: body.slice(0, 500) || undefined, code: undefined };
  const parsed = ErrorEnvelope.safeParse(body, UNCOMPILED);
  if (!parsed.success) return { message: undefined, code: undefined };
  const record = parsed.data;
  const inner = typeof record.error === "object" && record.error ? record.error : record;
  const { detail } = record;
  let message =
    inner.message ||
    (typeof record.error === "string" && record.error) ||
    (typeof detail === "string" && detail) ||
    undefined;
  if (!message && Array.isArray(detail)) {
    message = detail
      .map((issue) => {
        const known = ValidationIssue.safeParse(issue, UNCOMPILED);
        return known.success ? `${known.data.loc?.join(".") ?? ""}: ${known.data.msg ?? ""}` : String(issue);
      })
      .join("; ");
  }
  const rawCode = inner.code ?? inner.type ?? inner.status ?? record.code;
  return { message, code: rawCode === undefined || rawCode === null ? undefined : String(rawCode) };
}

/** An error body as text, parsed when it says it is JSON (`*\/json`, `*+json`); undefined when empty or unreadable. */
export async function errorBody(response: Response, read: () => Promise<string>): Promise<unknown> {
  let text: string;
  try {
    text = await read();
  } catch {
    return undefined;
  }
  if (!text) return undefined;
  const type = (response.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (!/\/(?:.*[.+-])?json$/.test(type)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
