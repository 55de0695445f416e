import { plainFields } from "./plain-object.js";

/**
 * Settings schemas that are `engineSettingsShape` plus optional fields: every engine's own.
 * A section of the client options holding only a key and a base URL passes them as it is, so
 * `new Sonde({ openai: { apiKey } })` need not build the schema (zod builds one on its first
 * use, about 5 ms of a process's first client). An adapter from elsewhere is always parsed, and
 * so are the engines' own when a CommonJS app requires `sonde/core` and `sonde/providers/*`:
 * each CommonJS entry has its own copy of this set, so the mark is not seen (the schema
 * parses the section, as before this check existed).
 */
const shapeSchemas = new WeakSet<object>();

/** Marks `schema` as `engineSettingsShape` plus optional fields only (test/core/plain-settings.test.ts holds every engine's to it). */
export function shapeSettings<S extends object>(schema: S): S {
  shapeSchemas.add(schema);
  return schema;
}

/**
 * Whether `schema`, marked by `shapeSettings`, accepts `section` for sure, without building it:
 * a key and a base URL, strings (earlier keys, rarer, go to the schema).
 */
export function plainSection(schema: object, section: unknown): boolean {
  const fields = plainFields(section);
  if (!fields || !shapeSchemas.has(schema)) return false;
  for (const key in fields)
    if ((key !== "apiKey" && key !== "baseURL") || !["string", "undefined"].includes(typeof fields[key]))
      return false;
  return true;
}
