/**
 * An object literal's own enumerable fields, or undefined for anything else. The hand checks
 * that stand in for a zod schema on common input (plain-request.ts, plain-settings.ts) take only
 * these: zod also reads inherited and non-enumerable properties, so such objects go to it.
 */
export function plainFields(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const proto = Object.getPrototypeOf(value);
  if (
    (proto !== Object.prototype && proto !== null) ||
    Object.getOwnPropertyNames(value).length !== Object.keys(value).length
  )
    return undefined;
  return value as Record<string, unknown>;
}
