/**
 * What every managed engine's section of the client options holds (key, endpoint, rotated
 * keys), as a zod shape each provider's own settings schema extends.
 */
import { z } from "zod";

const buildShape = () => ({
  apiKey: z.string().optional(),
  baseURL: z.string().optional(),
  previousApiKeys: z.array(z.string()).optional(),
});
let shape: ReturnType<typeof buildShape> | undefined;
const shapeOf = () => {
  if (shape === undefined) shape = buildShape();
  return shape;
};

/**
 * Getters, so that the schemas are built when a settings schema first spreads them, not at
 * import (lazy-schema.ts; its Proxy does not suit an optional schema).
 */
export const engineSettingsShape = {
  /** The engine's API key; defaults to its environment variable (`OPENAI_API_KEY`, …). */
  get apiKey() {
    return shapeOf().apiKey;
  },
  /** The API's base URL, e.g. a proxy or a test server. */
  get baseURL() {
    return shapeOf().baseURL;
  },
  /** After a key rotation: refs created with these keys still attach (see README, Refs). Never sent. */
  get previousApiKeys() {
    return shapeOf().previousApiKeys;
  },
};

/** The longest wait a timer holds: setTimeout fires a longer one after 1 ms. */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;
export const longestTimer = `at most ${LONGEST_TIMER_MS} ms (about 24.8 days: a timer set longer fires at once)`;

/** A wait in milliseconds that a timer holds. A function, so a bundle without such a wait drops it. */
export const timerMs = () => z.number().min(0).max(LONGEST_TIMER_MS, `takes ${longestTimer}`);
