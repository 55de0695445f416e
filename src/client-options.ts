/**
 * The keys `new Sonde()` accepts, section by section. A misspelt key (`apikey`,
 * `organisation`) would otherwise be ignored silently and surface much later as "no key";
 * it is rejected at once with the nearest valid key. A new option is one line here.
 */
import { distance } from "../catalog/lookup.js";
import { InvalidRequestError } from "./errors.js";
import type { RetryPolicy } from "./provider.js";
import { LONGEST_TIMER_MS, longestTimer } from "./settings.js";

const engine = ["apiKey", "baseURL", "previousApiKeys"];

/** Accepted keys per section ("" is the top level). Sections not listed (logger, env, portable.chat) are open. */
const optionKeys: Record<string, readonly string[]> = {
  "": [
    "openai",
    "gemini",
    "openrouter",
    "perplexity",
    "hosted",
    "portable",
    "fetch",
    "clock",
    "idleTimeoutMs",
    "retry",
    "logger",
    "telemetry",
    "env",
    "owner",
  ],
  openai: [...engine, "organization", "project"],
  gemini: engine,
  openrouter: [...engine, "appName", "appUrl"],
  perplexity: [...engine, "presetField", "agentPath", "stream", "cancelWaitMs"],
  hosted: [...engine, "cancelWaitMs"],
  portable: ["chat", "search", "fetcher", "store", "maxConcurrentJobs", "leaseMs"],
  retry: ["attempts", "minDelayMs", "maxDelayMs"],
};

function nearest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const ranked = known
    .map((candidate) => ({ candidate, d: distance(lower, candidate.toLowerCase()) }))
    .sort((a, b) => a.d - b.d);
  const best = ranked[0];
  // Only a plausible typo: at most a third of the key's letters differ.
  return best && best.d <= Math.max(2, Math.ceil(key.length / 3)) ? best.candidate : undefined;
}

/** Throws `InvalidRequestError` naming the first unknown key and the nearest valid one. */
export function checkOptionKeys(options: object): void {
  // Used deep inside every job: a non-function (a Date for `clock`) must fail here, not there.
  const given = options as Record<string, unknown>;
  for (const key of ["fetch", "clock"])
    if (given[key] !== undefined && typeof given[key] !== "function")
      throw new InvalidRequestError(`Client option "${key}" must be a function.`);
  const sections: [string, unknown][] = [["", options], ...Object.entries(options)];
  for (const [section, value] of sections) {
    const known = optionKeys[section];
    if (!known || !value || typeof value !== "object") continue;
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue;
      const path = section ? `${section}.${key}` : key;
      const guess = nearest(key, known);
      throw new InvalidRequestError(
        `Unknown client option "${path}".${guess ? ` Did you mean "${section ? `${section}.` : ""}${guess}"?` : ""} ` +
          `Valid${section ? ` ${section}` : ""} options: ${known.join(", ")}.`,
      );
    }
  }
}

/**
 * The number options, as the client will use them (`retry` merged with its defaults): an
 * `InvalidRequestError` naming the first one out of range and what it takes.
 */
export function checkOptionValues(idleTimeoutMs: number, retry: RetryPolicy): void {
  const check = (name: string, value: number, ok: boolean, takes: string) => {
    if (!ok)
      throw new InvalidRequestError(
        `Client option "${name}" takes ${takes}; got ${typeof value === "string" ? `"${value}"` : value}.`,
      );
  };
  check(
    "idleTimeoutMs",
    idleTimeoutMs,
    idleTimeoutMs > 0 && Number.isFinite(idleTimeoutMs),
    "a finite number of milliseconds above 0",
  );
  check("idleTimeoutMs", idleTimeoutMs, idleTimeoutMs <= LONGEST_TIMER_MS, longestTimer);
  const { attempts, minDelayMs, maxDelayMs } = retry;
  check(
    "retry.attempts",
    attempts,
    Number.isInteger(attempts) && attempts >= 0,
    "a whole number from 0 (0: no retries)",
  );
  for (const [name, value] of [
    ["minDelayMs", minDelayMs],
    ["maxDelayMs", maxDelayMs],
  ] as const)
    check(
      `retry.${name}`,
      value,
      value >= 0 && Number.isFinite(value),
      "a finite number of milliseconds from 0",
    );
  check("retry.maxDelayMs", maxDelayMs, maxDelayMs <= LONGEST_TIMER_MS, longestTimer);
  check("retry.minDelayMs", minDelayMs, minDelayMs <= maxDelayMs, `at most retry.maxDelayMs (${maxDelayMs})`);
}
