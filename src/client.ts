import { checkOptionKeys, checkOptionValues } from "./client-options.js";
import { InvalidRequestError, UnsupportedAdapterError } from "./errors.js";
import type { ProviderName } from "./events.js";
import type { SondeTelemetry } from "./observe.js";
import { plainSection } from "./plain-settings.js";
import {
  type Logger,
  type ProviderContext,
  type ProviderSettings,
  type ResearchAdapter,
  type RetryPolicy,
  specVersion,
} from "./provider.js";
import { redact, redactValue, registerSecret } from "./redact.js";
import type {
  GeminiSettings,
  HostedSettings,
  OpenAISettings,
  OpenRouterSettings,
  PerplexitySettings,
  PortableSettings,
} from "./registry.js";
import { ResearchNamespace } from "./research.js";
import { UNCOMPILED } from "./transport/fast-json.js";
import { defaultRetryPolicy } from "./transport/retry.js";

export type { EngineSettings } from "./engine-settings.js";
export type { HostedSettings, OpenAISettings, OpenRouterSettings, PerplexitySettings, PortableSettings };

export interface SondeOptions {
  openai?: OpenAISettings;
  gemini?: GeminiSettings;
  openrouter?: OpenRouterSettings;
  perplexity?: PerplexitySettings;
  hosted?: HostedSettings;
  portable?: PortableSettings;
  /** A fetch implementation. @defaultValue globalThis.fetch */
  fetch?: typeof globalThis.fetch;
  /** Current time; catalog lifecycle checks use it. @defaultValue () => new Date() */
  clock?: () => Date;
  /** No bytes (keepalives count) for this long = a dropped stream. @defaultValue 300_000 */
  idleTimeoutMs?: number;
  /** Reconnect and poll policy. @defaultValue { attempts: 6, minDelayMs: 500, maxDelayMs: 30_000 } */
  retry?: Partial<RetryPolicy>;
  logger?: Partial<Logger>;
  /**
   * Watches every job (spans, metrics). Sonde ships one for OpenTelemetry in `sonde/tracing`:
   * `telemetry: sondeTracing()`. Without it nothing is observed or imported.
   */
  telemetry?: SondeTelemetry;
  /** Where keys come from when not passed. @defaultValue process.env */
  env?: Record<string, string | undefined>;
  /**
   * Your application's owner of the jobs this client starts (a tenant or user id), written
   * into refs; refs of another owner are refused. A call's `{ owner }` overrides it.
   */
  owner?: string;
}

const envKeys: Record<Exclude<ProviderName, "portable">, string[]> = {
  openai: ["OPENAI_API_KEY"],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
  openrouter: ["OPENROUTER_API_KEY"],
  perplexity: ["PERPLEXITY_API_KEY"],
  hosted: ["SONDE_HOSTED_API_KEY"],
};

function makeLogger(partial: Partial<Logger> | undefined): Logger {
  const noop = () => {};
  // Everything we log is redacted, whatever the user's logger does with it.
  const wrap = (fn: ((m: string, d?: Record<string, unknown>) => void) | undefined) =>
    fn
      ? (message: string, data?: Record<string, unknown>) => fn(redact(message), data && redactValue(data))
      : noop;
  return {
    debug: wrap(partial?.debug),
    info: wrap(partial?.info),
    warn: wrap(partial?.warn),
    error: wrap(partial?.error),
  };
}

/** Options of `createSonde`: the client's options plus the engines it runs. */
export interface CreateSondeOptions extends SondeOptions {
  /** The engines this client runs (`openaiAdapter` from `sonde/providers/openai`, …); one per provider. */
  adapters: readonly ResearchAdapter[];
}

function byProvider(list: readonly ResearchAdapter[]): Partial<Record<ProviderName, ResearchAdapter>> {
  const out: Partial<Record<ProviderName, ResearchAdapter>> = {};
  for (const adapter of list) {
    if (out[adapter.provider] && out[adapter.provider] !== adapter)
      throw new InvalidRequestError(
        `Two adapters for ${adapter.provider} were given to createSonde; pass one.`,
      );
    out[adapter.provider] = adapter;
  }
  return out;
}

/**
 * A Sonde client running exactly the engines it is given: an app bundles only those.
 * `new Sonde()` (from `sonde`) is this with every engine. Keys come from options or the
 * environment as for `new Sonde()`.
 * @example
 * ```ts
 * import { createSonde } from "sonde/core";
 * import { openaiAdapter } from "sonde/providers/openai";
 *
 * const client = createSonde({ adapters: [openaiAdapter], openai: { apiKey: process.env.OPENAI_API_KEY } });
 * ```
 */
export function createSonde(options: CreateSondeOptions): SondeClient {
  const { adapters, ...rest } = options;
  return new SondeClient(rest, byProvider(adapters));
}

/** Each engine's section of the options, checked against the schema its adapter declares. */
function checkSettings(
  options: SondeOptions,
  adapters: Partial<Record<ProviderName, ResearchAdapter>>,
): void {
  for (const adapter of Object.values(adapters)) {
    const section = options[adapter.provider];
    if (section === undefined || !adapter.settingsSchema) continue;
    if (plainSection(adapter.settingsSchema, section)) continue;
    const parsed = adapter.settingsSchema.safeParse(section, UNCOMPILED);
    if (parsed.success) continue;
    const issue = parsed.error.issues[0]!;
    throw new InvalidRequestError(
      `Invalid client option ${[adapter.provider, ...issue.path].join(".")}: ${issue.message}.`,
    );
  }
}

/**
 * The Sonde client. Every field is optional: keys come from the environment
 * (`OPENAI_API_KEY`, `GEMINI_API_KEY`/`GOOGLE_API_KEY`, `OPENROUTER_API_KEY`,
 * `PERPLEXITY_API_KEY`, `SONDE_HOSTED_API_KEY`/`SONDE_HOSTED_BASE_URL`).
 */
export class SondeClient {
  readonly research: ResearchNamespace;
  readonly #contexts = new Map<ProviderName, ProviderContext>();

  /** @internal Use `new Sonde()` (every engine) or `createSonde({ adapters })`. */
  constructor(options: SondeOptions, adapters: Partial<Record<ProviderName, ResearchAdapter>>) {
    checkOptionKeys(options);
    for (const adapter of Object.values(adapters)) {
      // Adapters may come from another package, built against another spec: check, do not trust the type.
      if (adapter.specVersion !== specVersion)
        throw new UnsupportedAdapterError(String(adapter.provider), adapter.specVersion, specVersion);
    }
    const env = options.env ?? (typeof process !== "undefined" ? process.env : {});
    const fetchImpl = options.fetch ?? ((...args: Parameters<typeof fetch>) => globalThis.fetch(...args));
    const clock = options.clock ?? (() => new Date());
    // A field left undefined takes its default, as a missing one does (and as other options do).
    const given = options.retry ?? {};
    const retry: RetryPolicy = {
      attempts: given.attempts ?? defaultRetryPolicy.attempts,
      minDelayMs: given.minDelayMs ?? defaultRetryPolicy.minDelayMs,
      maxDelayMs: given.maxDelayMs ?? defaultRetryPolicy.maxDelayMs,
    };
    const logger = makeLogger(options.logger);
    const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
    checkOptionValues(idleTimeoutMs, retry);

    for (const provider of ["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"] as const) {
      let settings: ProviderSettings = {};
      let extras: Record<string, unknown> = {};
      if (provider === "portable") {
        // SONDE_STORE_DIR moves the default job store (tests, CI); portable.store still wins.
        extras = { ...options.portable, ...(env.SONDE_STORE_DIR && { storeDir: env.SONDE_STORE_DIR }) };
        for (const chat of Object.values(options.portable?.chat ?? {})) registerSecret(chat.apiKey);
        settings = {};
      } else {
        const given = options[provider] ?? {};
        const apiKey = given.apiKey ?? envKeys[provider].map((name) => env[name]).find((v) => v);
        const baseURL = given.baseURL ?? (provider === "hosted" ? env.SONDE_HOSTED_BASE_URL : undefined);
        registerSecret(apiKey);
        const previous: unknown = given.previousApiKeys ?? [];
        if (!Array.isArray(previous) || !previous.every((key) => typeof key === "string"))
          throw new InvalidRequestError(
            `${provider}.previousApiKeys must be an array of API keys (strings).`,
          );
        for (const key of previous) registerSecret(key);
        settings = { ...given, apiKey, baseURL };
      }
      this.#contexts.set(provider, {
        provider,
        settings,
        fetch: fetchImpl,
        clock,
        idleTimeoutMs,
        retry,
        logger,
        extras,
      });
    }
    checkSettings(options, adapters);
    // The portable engine reaches OpenAI/OpenRouter chat with their configured keys.
    const portable = this.#contexts.get("portable")!;
    portable.extras.providerKeys = {
      openai: this.#contexts.get("openai")!.settings,
      openrouter: this.#contexts.get("openrouter")!.settings,
    };
    this.research = new ResearchNamespace({
      clock,
      contextFor: (p) => this.#contexts.get(p)!,
      telemetry: options.telemetry,
      owner: options.owner,
      adapters,
    });
  }

  /** Keys never appear here: the client prints as its class name only. */
  toJSON(): string {
    return "Sonde";
  }
}
