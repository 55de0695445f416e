import { findModel, listModels, type ModelFilter, type ModelInfo } from "../catalog/index.js";
import { emptyUsage, mergeUsage } from "./cost.js";
import { AuthenticationError, InvalidRefError } from "./errors.js";
import type { ProviderName } from "./events.js";
import { ResearchJob } from "./job.js";
import { mockHook } from "./mocks.js";
import type {
  CancelOutcome,
  JobSnapshot,
  ProviderContext,
  ResearchAdapter,
  ResolvedRequest,
} from "./provider.js";
import { type JobRef, parseRef } from "./ref.js";
import { adapters } from "./registry.js";
import type { ResearchRequest } from "./request.js";
import { DEFAULT_TIMEOUT_MS, resolveRequest } from "./validate.js";

export interface AttachOptions {
  signal?: AbortSignal;
  /** Local deadline for the attached job object. @defaultValue one hour, capped by the model */
  timeoutMs?: number;
  /**
   * Portable jobs: send again the model, search and fetch calls that were in flight when
   * the process running the job died. They may have been billed; by default each one
   * becomes a gap saying so, and the job continues without it. @defaultValue false
   */
  repeatInterruptedCalls?: boolean;
}

const envNames: Partial<Record<ProviderName, string>> = {
  openai: "OPENAI_API_KEY",
  gemini: "GEMINI_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  perplexity: "PERPLEXITY_API_KEY",
  hosted: "SONDE_HOSTED_API_KEY",
};

/** `client.research`: start, re-attach, inspect and cancel deep research jobs. */
export class ResearchNamespace {
  readonly #clock: () => Date;
  readonly #contextFor: (provider: ProviderName) => ProviderContext;

  /** @internal */
  constructor(options: { clock: () => Date; contextFor: (provider: ProviderName) => ProviderContext }) {
    this.#clock = options.clock;
    this.#contextFor = options.contextFor;
  }

  /**
   * Validates the request and returns the job at once (synchronously); the network
   * starts when the job is iterated or `result()` is awaited. Throws the typed
   * validation errors synchronously, before any request is sent.
   */
  start(request: ResearchRequest): ResearchJob {
    const resolved = this.validate(request);
    const context = this.#contextFor(resolved.provider);
    const mocked = mockHook()?.start(resolved);
    const adapter = this.#adapter(resolved.provider);
    if (!mocked) this.#requireKey(resolved.provider, context);
    const session = mocked ?? adapter.start(resolved, context);
    return new ResearchJob({
      provider: resolved.provider,
      model: resolved.modelInfo.id,
      pricing: resolved.modelInfo.pricing,
      session,
      retry: context.retry,
      logger: context.logger,
      clock: this.#clock,
      timeoutMs: resolved.timeoutMs,
      signal: resolved.signal,
      cancel: (ref) => this.cancel(ref),
    });
  }

  /**
   * Re-attaches a job from its ref (after a restart, in another process). Events
   * already delivered before the ref was taken are not delivered again; `result()`
   * covers the whole job.
   */
  attach(ref: JobRef | unknown, options: AttachOptions = {}): ResearchJob {
    const parsed = parseRef(ref);
    const info = this.#modelOf(parsed);
    const context = this.#contextFor(parsed.provider);
    const mocked = mockHook()?.attach(parsed);
    if (!mocked) this.#requireKey(parsed.provider, context);
    const session =
      mocked ??
      this.#adapter(parsed.provider).attach(parsed, context, {
        ...(options.repeatInterruptedCalls !== undefined && {
          repeatInterruptedCalls: options.repeatInterruptedCalls,
        }),
      });
    const timeoutMs = Math.min(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, info.limits.maxDurationMs);
    return new ResearchJob({
      provider: parsed.provider,
      model: parsed.model,
      pricing: info.pricing,
      session,
      retry: context.retry,
      logger: context.logger,
      clock: this.#clock,
      timeoutMs,
      signal: options.signal,
      ref: parsed,
      cancel: (r) => this.cancel(r),
    });
  }

  /** One status read (a single GET where the engine has one); no stream. */
  async get(ref: JobRef | unknown): Promise<JobSnapshot> {
    const parsed = parseRef(ref);
    const info = this.#modelOf(parsed);
    const mocked = mockHook()?.get(parsed);
    if (mocked) return mocked;
    const context = this.#contextFor(parsed.provider);
    this.#requireKey(parsed.provider, context);
    const snapshot = await this.#adapter(parsed.provider).get(parsed, context);
    const { usage, ...rest } = snapshot;
    return { ...rest, ...(usage && { usage: mergeUsage(emptyUsage, usage, info.pricing) }) };
  }

  /** Cancels server-side where the engine can; the outcome says honestly what happened. */
  async cancel(ref: JobRef | unknown): Promise<CancelOutcome> {
    const parsed = parseRef(ref);
    const info = this.#modelOf(parsed);
    const mocked = mockHook()?.cancel(parsed);
    if (mocked) return mocked;
    const context = this.#contextFor(parsed.provider);
    this.#requireKey(parsed.provider, context);
    const { usage, ...rest } = await this.#adapter(parsed.provider).cancel(parsed, context);
    return { ...rest, ...(usage && { usage: mergeUsage(emptyUsage, usage, info.pricing) }) };
  }

  /** Catalog models, filtered by provider and capability. No network. */
  listModels(filter?: ModelFilter): ModelInfo[] {
    return listModels(filter);
  }

  /** Resolves a request exactly as `start` would, throwing the same typed errors. */
  validate(request: ResearchRequest): ResolvedRequest {
    return resolveRequest(request, {
      clock: this.#clock,
      adapterFor: (provider) => adapters[provider],
      contextFor: (provider) => this.#contextFor(provider),
    });
  }

  #adapter(provider: ProviderName): ResearchAdapter {
    const adapter = adapters[provider];
    if (!adapter)
      throw new InvalidRefError("provider", `No ${provider} engine is available in this build of Sonde.`);
    return adapter;
  }

  #modelOf(ref: JobRef): ModelInfo {
    const info = findModel(ref.model);
    if (!info || info.provider !== ref.provider) {
      throw new InvalidRefError(
        "model",
        `The ref names model "${ref.model}", which this Sonde's catalog does not know.`,
      );
    }
    return info;
  }

  #requireKey(provider: ProviderName, context: ProviderContext): void {
    const env = envNames[provider];
    if (env && !context.settings.apiKey) {
      throw new AuthenticationError(
        `No ${provider} API key: set ${env} or pass { ${provider}: { apiKey } } to new Sonde().`,
        { provider },
      );
    }
  }
}
