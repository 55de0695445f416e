import type { z } from "zod";
import { findIn, nearestIn } from "../catalog/lookup.js";
import type { ModelInfo, ToolType } from "../catalog/schema.js";
import {
  InvalidRequestError,
  ModelRetiredError,
  UnknownModelError,
  UnsupportedOptionError,
} from "./errors.js";
import type { ProviderName } from "./events.js";
import { plainRequest } from "./plain-request.js";
import type { ProviderContext, ResearchAdapter, ResolvedRequest } from "./provider.js";
import { type ParsedRequest, type RequestOption, ResearchRequest } from "./request.js";
import { UNCOMPILED } from "./transport/fast-json.js";

/** One hour, the default local deadline of a job. */
export const DEFAULT_TIMEOUT_MS = 3_600_000;

/** Options every engine honours, because the core implements them. */
const universal: readonly RequestOption[] = ["timeoutMs", "signal"];
/** Options only the portable (local) engine can honour, for a helpful message. */
const localOnly: readonly RequestOption[] = ["sources", "budget", "idempotencyKey"];

function onlySpendCap(budget: ParsedRequest["budget"]): boolean {
  return Object.entries(budget ?? {}).every(([key, value]) => key === "maxCostUSD" || value === undefined);
}

/**
 * What a user should know before the start about how far the cap can hold on this model.
 * The value is applied unchanged; the notes say when it is checked and what it cannot stop.
 */
function spendCapNotes(info: ModelInfo, cap: number): ResolvedRequest["adjustments"] {
  const notes: string[] = [];
  const hold = info.pricing.reservationUSD;
  if (info.capabilities.pollOnly)
    notes.push(
      `${info.id} reports no running cost before the job ends (poll-only): the cap is checked at the end${hold !== undefined ? " and against the provider's hold" : ""}, so it cannot stop spend part-way`,
    );
  if (hold !== undefined && hold > cap)
    notes.push(
      `the provider holds about $${hold.toFixed(2)} for a job on ${info.id}, above the cap: Sonde cancels the job once the hold is reported`,
    );
  const { inputPerM, outputPerM, verified } = info.pricing;
  if (inputPerM === 0 && outputPerM === 0 && !verified)
    notes.push(
      `no catalog price for ${info.id}: the cap sees only charges its endpoint reports (usage.cost)`,
    );
  if (!info.capabilities.cancel)
    notes.push(
      `${info.id} cannot be cancelled server-side: at the cap Sonde closes the connection, but billing may continue`,
    );
  return notes.map((reason) => ({ option: "budget", requested: cap, applied: cap, reason }));
}

/** Turns zod issues into one readable sentence per problem. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length ? issue.path.join(".") : "request";
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

const providerNames = ["openai", "gemini", "openrouter", "perplexity", "hosted", "portable"] as const;

/** What to do about an option this engine refuses: drop it, or the engines of this client that take it. */
function takenBy(key: RequestOption, adapterFor: (provider: ProviderName) => ResearchAdapter | undefined) {
  const engines = providerNames.filter((name) => adapterFor(name)?.supports.includes(key));
  return ` Drop it, or use an engine that takes it: ${engines.join(", ")}.`;
}

function providerOf(model: string): ProviderName | undefined {
  const name = model.slice(0, model.indexOf(":"));
  return providerNames.find((p) => p === name);
}

/** What to do about an engine this client was not built with. */
export const noEngine = (provider: ProviderName) =>
  `No ${provider} engine in this client: pass it to createSonde({ adapters }) from "sonde/providers/${provider}".`;

function engineMissing(provider: ProviderName): UnsupportedOptionError {
  return new UnsupportedOptionError("model", noEngine(provider));
}

/**
 * Validates a request against the schema, the catalog (existence, lifecycle by the
 * injected clock, capabilities) and the engine, before anything touches the network.
 */
export function resolveRequest(
  input: unknown,
  options: {
    /** The catalog entries of the client's engines. */
    models: readonly ModelInfo[];
    clock: () => Date;
    adapterFor: (provider: ProviderName) => ResearchAdapter | undefined;
    contextFor: (provider: ProviderName) => Pick<ProviderContext, "settings" | "extras">;
  },
): ResolvedRequest {
  // The common request is checked by hand, with the schema's result (plain-request.ts).
  let request = plainRequest(input);
  if (!request) {
    const parsed = ResearchRequest.safeParse(input, UNCOMPILED);
    if (!parsed.success) {
      throw new InvalidRequestError(`Invalid research request: ${describeIssues(parsed.error)}.`);
    }
    request = parsed.data;
  }
  const info = findIn(options.models, request.model);
  const provider = providerOf(request.model);
  // An engine's models are known only to clients built with it: name the engine to add.
  if (!info && provider && !options.adapterFor(provider)) throw engineMissing(provider);
  if (!info || !provider)
    throw new UnknownModelError(request.model, nearestIn(options.models, request.model));

  const { lifecycle } = info;
  const shutdown = lifecycle.shutdownAt ? Date.parse(lifecycle.shutdownAt) : undefined;
  // The shutdown date, read with the injected clock, decides; `stage` alone only when no date is known.
  const retired =
    shutdown !== undefined ? shutdown <= options.clock().getTime() : lifecycle.stage === "retired";
  if (retired) {
    throw new ModelRetiredError(info.id, lifecycle.shutdownAt, lifecycle.replacement);
  }

  const adapter = options.adapterFor(provider);
  if (!adapter) throw engineMissing(provider);

  for (const [key, value] of Object.entries(request) as [keyof typeof request, unknown][]) {
    if (key === "model" || key === "query" || value === undefined) continue;
    if (universal.includes(key) || adapter.supports.includes(key)) continue;
    // The spend cap is enforced by the core for every engine; the rest of `budget` is the portable engine's.
    if (key === "budget" && onlySpendCap(request.budget)) continue;
    const hint = localOnly.includes(key)
      ? ` Only the portable engine (portable:<chat>/<model>) takes it${key === "budget" ? "; every engine takes budget.maxCostUSD (a spend cap)" : ""}.`
      : takenBy(key, options.adapterFor);
    throw new UnsupportedOptionError(
      key,
      `The ${provider} engine cannot honour "${key}" for ${info.id}.${hint}`,
    );
  }

  for (const tool of request.tools ?? []) {
    if (!info.capabilities.tools.includes(tool.type as ToolType)) {
      const allowed = info.capabilities.tools.join(", ") || "none";
      throw new UnsupportedOptionError(
        "tools",
        `${info.id} does not accept the "${tool.type}" tool (accepted: ${allowed}).`,
      );
    }
  }
  if (request.previousJobId && !info.capabilities.followUps) {
    throw new UnsupportedOptionError(
      "previousJobId",
      `${info.id} cannot continue an earlier job (no follow-ups); start a new job with the context in "instructions".`,
    );
  }

  const adjustments: ResolvedRequest["adjustments"] = [];
  const requestedTimeout = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timeoutMs = Math.min(requestedTimeout, info.limits.maxDurationMs);
  // Only a value the user chose is reported as adjusted; the default simply becomes the engine's cap.
  if (request.timeoutMs !== undefined && timeoutMs !== requestedTimeout) {
    adjustments.push({
      option: "timeoutMs",
      requested: requestedTimeout,
      applied: timeoutMs,
      reason: `${info.id} runs at most ${info.limits.maxDurationMs} ms`,
    });
  }

  const cap = request.budget?.maxCostUSD;
  if (cap !== undefined) adjustments.push(...spendCapNotes(info, cap));

  const resolved: ResolvedRequest = {
    ...request,
    provider,
    providerModel: info.model,
    modelInfo: info,
    timeoutMs,
    adjustments,
  };
  adapter.validate?.(resolved, options.contextFor(provider));
  return resolved;
}
