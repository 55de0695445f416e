import { findIn, listIn, type ModelFilter } from "../catalog/lookup.js";
import type { ModelInfo } from "../catalog/schema.js";
import { emptyUsage, mergeUsage } from "./cost.js";
import { AuthenticationError, InvalidRefError, InvalidRequestError } from "./errors.js";
import { type CostEstimate, estimateOf } from "./estimate.js";
import type { ProviderName } from "./events.js";
import { ResearchJob } from "./job.js";
import { mockHook } from "./mocks.js";
import type { JobDescription, JobObserver, SondeTelemetry } from "./observe.js";
import type {
  CancelOutcome,
  JobSnapshot,
  ProviderContext,
  ResearchAdapter,
  ResolvedRequest,
} from "./provider.js";
import { redact } from "./redact.js";
import { type JobRef, parseRef, refLimits } from "./ref.js";
import {
  bindRef,
  checkRefBinding,
  prepareBinding,
  type RefIdentity,
  verifyCredential,
} from "./ref-binding.js";
import type { ResearchRequest } from "./request.js";
import { typedTransportError } from "./transport/http.js";
import { DEFAULT_TIMEOUT_MS, noEngine, resolveRequest } from "./validate.js";

/**
 * A one-shot read or cancel that failed below HTTP (fetch's bare `TypeError`): a refused
 * connection is a `ConnectionError`, anything else a lost connection, typed like the rest.
 */
async function typedFailure(error: unknown, provider: ProviderName): Promise<never> {
  throw await typedTransportError(error, provider);
}

/** Options of a call that reads or cancels a job by its ref. */
export interface RefCallOptions {
  /**
   * The owner (tenant or user id) this call acts for; the ref must carry the same.
   * @defaultValue the client's `owner` option
   */
  owner?: string;
}

/** Options of `research.start`. */
export interface StartOptions {
  /** The owner (tenant or user id) written into the job's refs. @defaultValue the client's `owner` option */
  owner?: string;
}

export interface AttachOptions extends RefCallOptions {
  signal?: AbortSignal;
  /** A spend cap for the attached job (refs do not carry one): see "Controlling spend" in the README. */
  maxCostUSD?: number;
  /** Local deadline for the attached job object. @defaultValue one hour, capped by the model */
  timeoutMs?: number;
  /**
   * Portable jobs: send again the model, search and fetch calls that were in flight when
   * the process running the job died. They may have been billed; by default each one
   * becomes a gap saying so, and the job continues without it. @defaultValue false
   */
  repeatInterruptedCalls?: boolean;
}

/** The catalog's order of engines, which `listModels()` keeps whatever order adapters come in. */
const catalogOrder: readonly ProviderName[] = [
  "openai",
  "gemini",
  "openrouter",
  "perplexity",
  "hosted",
  "portable",
];

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
  readonly #adapters: Partial<Record<ProviderName, ResearchAdapter>>;
  /** The catalog entries of this client's engines, in the catalog's provider order. */
  readonly #models: readonly ModelInfo[];
  readonly #owner: string | undefined;
  readonly #telemetry: SondeTelemetry | undefined;

  /** @internal */
  constructor(options: {
    clock: () => Date;
    contextFor: (provider: ProviderName) => ProviderContext;
    owner?: string | undefined;
    telemetry?: SondeTelemetry | undefined;
    adapters: Partial<Record<ProviderName, ResearchAdapter>>;
  }) {
    this.#adapters = options.adapters;
    this.#models = catalogOrder.flatMap((provider) => options.adapters[provider]?.models ?? []);
    this.#clock = options.clock;
    this.#contextFor = options.contextFor;
    this.#owner = checkOwner(options.owner, "the client's owner option");
    this.#telemetry = options.telemetry;
  }

  #observe(job: JobDescription): JobObserver | undefined {
    try {
      return this.#telemetry?.observeJob(job);
    } catch (error) {
      this.#contextFor(job.provider).logger.warn("telemetry failed to observe a job; it runs unobserved", {
        error: (error as Error).message,
      });
      return undefined;
    }
  }

  /**
   * Validates the request and returns the job at once (synchronously); the network
   * starts when the job is iterated or `result()` is awaited. Throws the typed
   * validation errors synchronously, before any request is sent.
   */
  start(request: ResearchRequest, options: StartOptions = {}): ResearchJob {
    const resolved = this.#resolve(request);
    const context = this.#contextFor(resolved.provider);
    const identity = this.#identity(context, options.owner);
    const mocked = mockHook()?.start(resolved);
    const adapter = this.#adapter(resolved.provider);
    if (!mocked) this.#requireConfig(resolved.provider, context);
    const session = mocked ?? adapter.start(resolved, context);
    prepareBinding(identity);
    const maxCostUSD = resolved.budget?.maxCostUSD;
    const pollOnly = resolved.modelInfo.capabilities.pollOnly;
    return new ResearchJob({
      maxCostUSD,
      pollOnly,
      observe: () =>
        this.#observe({
          provider: resolved.provider,
          model: resolved.modelInfo.id,
          providerModel: resolved.providerModel,
          attached: false,
          pollOnly,
          redact,
          ...(maxCostUSD !== undefined && { maxCostUSD }),
        }),
      provider: resolved.provider,
      model: resolved.modelInfo.id,
      pricing: resolved.modelInfo.pricing,
      session,
      retry: context.retry,
      logger: context.logger,
      clock: this.#clock,
      timeoutMs: resolved.timeoutMs,
      signal: resolved.signal,
      bind: (jobId) => bindRef(identity, jobId),
      cancel: (ref) => this.cancel(ref, { owner: identity.owner }),
    });
  }

  /**
   * Re-attaches a job from its ref (after a restart, in another process). Events
   * already delivered before the ref was taken are not delivered again; `result()`
   * covers the whole job.
   */
  attach(ref: JobRef | string, options: AttachOptions = {}): ResearchJob {
    const parsed = parseRef(ref);
    const info = this.#modelOf(parsed);
    const context = this.#contextFor(parsed.provider);
    const identity = this.#identity(context, options.owner);
    checkRefBinding(parsed, identity);
    const mocked = mockHook()?.attach(parsed);
    if (!mocked) this.#requireConfig(parsed.provider, context);
    const session =
      mocked ??
      this.#adapter(parsed.provider).attach(parsed, context, {
        ...(options.repeatInterruptedCalls !== undefined && {
          repeatInterruptedCalls: options.repeatInterruptedCalls,
        }),
      });
    const timeoutMs = Math.min(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, info.limits.maxDurationMs);
    const { maxCostUSD } = options;
    if (maxCostUSD !== undefined && !(Number.isFinite(maxCostUSD) && maxCostUSD > 0))
      throw new InvalidRequestError(`attach: maxCostUSD must be a positive number (got ${maxCostUSD}).`);
    const pollOnly = info.capabilities.pollOnly;
    return new ResearchJob({
      maxCostUSD,
      pollOnly,
      observe: () =>
        this.#observe({
          provider: parsed.provider,
          model: parsed.model,
          providerModel: info.model,
          attached: true,
          jobId: parsed.jobId,
          pollOnly,
          redact,
          ...(maxCostUSD !== undefined && { maxCostUSD }),
        }),
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
      // The tag is checked (hashing is async) when the job first runs, before its first request.
      verify: () => verifyCredential(parsed, identity),
      bind: (jobId) => bindRef(identity, jobId),
      cancel: (r) => this.cancel(r, { owner: identity.owner }),
    });
  }

  /** One status read (a single GET where the engine has one); no stream. */
  get(ref: JobRef | string, options: RefCallOptions = {}): Promise<JobSnapshot> {
    return this.#byRef(ref, options, "get");
  }

  /** Cancels server-side where the engine can; the outcome says honestly what happened. */
  cancel(ref: JobRef | string, options: RefCallOptions = {}): Promise<CancelOutcome> {
    return this.#byRef(ref, options, "cancel");
  }

  /** A one-shot call on a job by its ref: checked like an attach, usage priced from the catalog. */
  async #byRef<T extends JobSnapshot | CancelOutcome>(
    ref: JobRef | string,
    options: RefCallOptions,
    call: "get" | "cancel",
  ): Promise<T> {
    const parsed = parseRef(ref);
    const info = this.#modelOf(parsed);
    const context = this.#contextFor(parsed.provider);
    const identity = this.#identity(context, options.owner);
    checkRefBinding(parsed, identity);
    await verifyCredential(parsed, identity);
    const mocked = mockHook()?.[call](parsed);
    if (mocked) return mocked as Promise<T>;
    this.#requireConfig(parsed.provider, context);
    const { usage, ...rest } = await this.#adapter(parsed.provider)
      [call](parsed, context)
      .catch((error: unknown) => typedFailure(error, parsed.provider));
    return { ...rest, ...(usage && { usage: mergeUsage(emptyUsage, usage, info.pricing) }) } as T;
  }

  /** The catalog models of this client's engines, filtered by provider and capability. No network. */
  listModels(filter?: ModelFilter): ModelInfo[] {
    return listIn(this.#models, filter);
  }

  /**
   * What the catalog knows about the request's cost, before anything is sent: the price
   * dimensions, a typical range where one was published (else `"unknown"`), any hold the
   * provider takes, and how a `budget.maxCostUSD` cap can act on this model. Validates the
   * request like `start`, but needs no API key: nothing is sent.
   */
  estimate(request: ResearchRequest): CostEstimate {
    return estimateOf(this.#resolve(request));
  }

  /**
   * Resolves a request exactly as `start` would, throwing the same typed errors: the schema,
   * the catalog, the engine's options and config, and a missing API key (unless a
   * `sonde/testing` mock would answer the request). No network.
   */
  validate(request: ResearchRequest): ResolvedRequest {
    const resolved = this.#resolve(request);
    if (!mockHook()?.claims?.(resolved))
      this.#requireConfig(resolved.provider, this.#contextFor(resolved.provider));
    return resolved;
  }

  #resolve(request: ResearchRequest): ResolvedRequest {
    return resolveRequest(request, {
      models: this.#models,
      clock: this.#clock,
      adapterFor: (provider) => this.#adapters[provider],
      contextFor: (provider) => this.#contextFor(provider),
    });
  }

  #identity(context: ProviderContext, owner: string | undefined): RefIdentity {
    return {
      provider: context.provider,
      apiKey: context.settings.apiKey,
      previousApiKeys: context.settings.previousApiKeys ?? [],
      owner: owner === undefined ? this.#owner : checkOwner(owner, "the call's owner option"),
    };
  }

  #adapter(provider: ProviderName): ResearchAdapter {
    const adapter = this.#adapters[provider];
    if (!adapter) throw new InvalidRefError("provider", noEngine(provider));
    return adapter;
  }

  #modelOf(ref: JobRef): ModelInfo {
    // A ref of an engine this client lacks: say which engine to add, before "unknown model".
    // A retired model's ref fails before the key check: a missing key is not the problem.
    this.#adapter(ref.provider).checkRef?.(ref);
    const info = findIn(this.#models, ref.model);
    if (info && info.provider !== ref.provider)
      throw new InvalidRefError(
        "model",
        `The ref's model "${ref.model}" is not ${ref.provider}'s: the ref was edited. Pass the object job.toRef() returned.`,
      );
    if (!info)
      throw new InvalidRefError(
        "model",
        `This Sonde does not know the ref's model "${ref.model}" (a newer Sonde's ref?). Pass the object job.toRef() returned.`,
      );
    return info;
  }

  #requireConfig(provider: ProviderName, context: ProviderContext): void {
    this.#adapters[provider]?.checkConfig?.(context);
    const env = envNames[provider];
    if (env && !context.settings.apiKey) {
      throw new AuthenticationError(
        `No ${provider} API key: set ${env} or pass { ${provider}: { apiKey } } to new Sonde().`,
        { provider, envVar: env },
      );
    }
  }
}

/** An owner is a short non-empty string (it goes into every ref). */
function checkOwner(owner: unknown, where: string): string | undefined {
  if (owner === undefined) return undefined;
  if (typeof owner !== "string" || owner.length === 0 || owner.length > refLimits.owner)
    throw new InvalidRequestError(
      `${where} must be a non-empty string of at most ${refLimits.owner} characters.`,
    );
  return owner;
}
