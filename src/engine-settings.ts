/**
 * The schema of a managed engine's section alone, for adapters written elsewhere (`sonde/provider`).
 * In a module of its own: a top-level schema is kept by a bundler that cannot see it is unused
 * (a minified build drops the annotation that would say so), and the core never uses this one.
 */
import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";
import { engineSettingsShape } from "./settings.js";

/** A managed engine's key and endpoint (keys default to the environment). */
export const engineSettingsSchema = lazySchema(() => z.strictObject(engineSettingsShape));

/** A managed engine's key and endpoint (keys default to the environment). */
export type EngineSettings = z.input<typeof engineSettingsSchema>;
