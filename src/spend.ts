/**
 * The spend cap (`budget.maxCostUSD`), in one place. A job feeds its meter every event it
 * delivers; the meter keeps the running cost and says, once, when it crosses the cap. The
 * running cost is the best of what is known: the provider's charge or the catalog estimate
 * from the latest `usage` snapshot, raised by an estimate of the text and thinking streamed
 * since (about four characters a token) and the searches seen, and a provider's own quote for the job (the hosted
 * API's hold). The streamed estimate is a lower bound: reasoning an engine does not stream
 * is not in it.
 */
import type { Pricing } from "../catalog/schema.js";
import { emptyUsage } from "./cost.js";
import type { Gap, ResearchEvent, Usage } from "./events.js";
import type { CancelOutcome, Logger } from "./provider.js";
import { redact } from "./redact.js";

/** The usual rule of thumb for English text; used only while an engine has not counted tokens itself. */
const CHARS_PER_TOKEN = 4;

export type SpendSource = "provider" | "estimate" | "streamed-estimate" | "quote";

/** The moment the running cost went past the cap. */
export interface CapCrossing {
  maxCostUSD: number;
  costUSD: number;
  source: SpendSource;
}

/**
 * The one way Sonde writes an amount of money: cents from a dollar up (and for zero), three
 * significant digits below a dollar (caps and running costs of a few cents are common), and
 * never exponent notation for a fraction of a micro-dollar.
 */
export const dollars = (value: number): string =>
  value >= 1 || value === 0
    ? `$${value.toFixed(2)}`
    : value < 0.000001
      ? "<$0.000001"
      : `$${value.toPrecision(3)}`;

export class SpendMeter {
  readonly maxCostUSD: number;
  readonly #pricing: Pricing;
  #usage: Usage = emptyUsage;
  #textChars = 0;
  #thinkingChars = 0;
  // Search actions seen in the stream, for engines that count searches only at the end.
  #searchesStarted = 0;
  #searchesCompleted = 0;
  #quoteUSD = 0;
  #crossed = false;

  constructor(maxCostUSD: number, pricing: Pricing) {
    this.maxCostUSD = maxCostUSD;
    this.#pricing = pricing;
  }

  /** Every event the job delivers (or replays on attach), in order. */
  observe(event: ResearchEvent): void {
    switch (event.type) {
      case "usage":
        this.#usage = event.usage;
        break;
      case "text":
        this.#textChars += event.delta.length;
        break;
      case "thinking":
        this.#thinkingChars += event.delta.length;
        break;
      case "search":
        // An engine may report a search as started and completed, or only one of them.
        if (event.action === "search" && event.state === "started") this.#searchesStarted++;
        if (event.action === "search" && event.state === "completed") this.#searchesCompleted++;
        break;
      case "status":
        if (event.reservedUSD !== undefined) this.#quoteUSD = Math.max(this.#quoteUSD, event.reservedUSD);
        break;
    }
  }

  /**
   * What the streamed text, thinking and searches add to the latest estimated usage, at
   * catalog prices. Plain arithmetic, no allocation: a capped job asks after every wire event.
   */
  #streamedExtra(usage: Usage): number {
    const pricing = this.#pricing;
    const text = Math.ceil(this.#textChars / CHARS_PER_TOKEN) - usage.outputTokens;
    const thinking = Math.ceil(this.#thinkingChars / CHARS_PER_TOKEN) - usage.reasoningTokens;
    const free = pricing.freeSearches ?? 0;
    const searches = Math.max(usage.searches, this.#searchesStarted, this.#searchesCompleted);
    const extraSearches = Math.max(0, searches - free) - Math.max(0, usage.searches - free);
    return (
      (Math.max(text, 0) * pricing.outputPerM +
        Math.max(thinking, 0) * (pricing.reasoningPerM ?? pricing.outputPerM)) /
        1_000_000 +
      (extraSearches * (pricing.perThousandSearches ?? 0)) / 1000
    );
  }

  #costNow(): number {
    const usage = this.#usage;
    const cost = usage.costSource === "estimate" ? usage.costUSD + this.#streamedExtra(usage) : usage.costUSD;
    return Math.max(cost, this.#quoteUSD);
  }

  /** Best current figure for what the job has cost (or, for a quote, will cost), and where it comes from. */
  running(): { costUSD: number; source: SpendSource } {
    const usage = this.#usage;
    let best: { costUSD: number; source: SpendSource } = { costUSD: usage.costUSD, source: usage.costSource };
    if (usage.costSource === "estimate") {
      // Whole millionths of a dollar, as the catalog estimate is.
      const streamed = Math.round((usage.costUSD + this.#streamedExtra(usage)) * 1e6) / 1e6;
      if (streamed > best.costUSD) best = { costUSD: streamed, source: "streamed-estimate" };
    }
    if (this.#quoteUSD > best.costUSD) best = { costUSD: this.#quoteUSD, source: "quote" };
    return best;
  }

  /** The crossing, the first time the running cost is above the cap; undefined otherwise (and ever after). */
  crossing(): CapCrossing | undefined {
    if (this.#crossed || this.#costNow() <= this.maxCostUSD) return undefined;
    const { costUSD, source } = this.running();
    this.#crossed = true;
    return { maxCostUSD: this.maxCostUSD, costUSD, source };
  }

  /**
   * The usage to report last, when Sonde stopped the job: the provider's charge for the
   * cancelled job when it gave one, else the running estimate when it is above the last
   * snapshot. Undefined when the last delivered usage already says it.
   */
  finalUsage(charged: Usage | undefined): Usage | undefined {
    if (charged?.costSource === "provider")
      return { ...this.#usage, costUSD: charged.costUSD, costSource: "provider" };
    const { costUSD, source } = this.running();
    if (source === "streamed-estimate" && costUSD > this.#usage.costUSD) {
      // The estimate priced the searches seen in the stream; the counts say the same.
      const searches = Math.max(this.#usage.searches, this.#searchesStarted, this.#searchesCompleted);
      return { ...this.#usage, searches, costUSD, costSource: "estimate" };
    }
    return undefined;
  }
}

function described(crossing: CapCrossing): string {
  const what =
    crossing.source === "provider"
      ? "as the provider charged it"
      : crossing.source === "quote"
        ? "as the provider quoted it when it accepted the job"
        : crossing.source === "streamed-estimate"
          ? "estimated from catalog prices and the text and searches streamed so far"
          : "estimated from catalog prices and the reported usage";
  return `The spend cap of ${dollars(crossing.maxCostUSD)} was crossed (${dollars(crossing.costUSD)}, ${what})`;
}

/**
 * The `cost-cap` gap of a job that completed above its cap: the figures that came with its
 * end crossed it (`final`), or the provider finished before Sonde's cancel reached it (`finished-first`).
 * The report is whole; the gap says the money went past the cap, so it is never only a log line.
 */
function aboveCapGap(crossing: CapCrossing, why: "final" | "finished-first"): Gap {
  const how =
    why === "final"
      ? "the figures that came with the job's end put it past the cap, so there was nothing left to stop"
      : "the provider finished the job before Sonde's cancel reached it";
  return {
    kind: "cost-cap",
    detail: `${described(crossing)} at the end: ${how}. The job completed above its cap; its report is whole and its usage says what it cost.`,
  };
}

/** The `cost-cap` gap that ends a capped job, saying honestly whether the spend stopped. */
export function capGap(crossing: CapCrossing, outcome: CancelOutcome | { failed: string }): Gap {
  const head = described(crossing);
  if ("failed" in outcome)
    return {
      kind: "cost-cap",
      detail: `${head}. Sonde asked the provider to cancel, but the cancel failed (${outcome.failed}): the job may still be running, and billing. The report is partial.`,
    };
  switch (outcome.outcome) {
    case "cancelled":
      return {
        kind: "cost-cap",
        detail: `${head}: Sonde cancelled the job server-side. The report is partial.`,
      };
    case "transport-only":
      return {
        kind: "cost-cap",
        detail: `${head}. ${outcome.detail ?? "This engine cannot be stopped server-side, so Sonde closed the connection."} Billing may continue; the report is partial.`,
      };
    default:
      return {
        kind: "cost-cap",
        detail: `${head}: Sonde asked the provider to cancel; it had not confirmed when the stream was closed (${outcome.detail ?? "no detail"}). The report is partial.`,
      };
  }
}

/** A job already over when the figures that came with its end crossed the cap: said at `warn`, and its gap. */
export function endedAboveCap(crossing: CapCrossing, logger: Logger): Gap {
  logger.warn("the job ended above its spend cap", { ...crossing });
  return aboveCapGap(crossing, "final");
}

/** `promise`, or the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** What `stopAtCap` needs of the job. */
export interface CappedJob {
  /** The job is over already (its final figure crossed the cap). */
  over: boolean;
  logger: Logger;
  /** Asks the provider to cancel; undefined before the job has an id. */
  cancel: (() => Promise<CancelOutcome>) | undefined;
  /** The job's abort signal: an abort or timeout does not wait for the cancel request's answer. */
  signal: AbortSignal;
  notify(outcome: CancelOutcome): void;
}

/**
 * Past the spend cap: asks the provider to cancel (once). Says whether the job completes
 * above its cap (`above`: it was over, or a completion won the race) or stops now, ending
 * `incomplete` with the `cost-cap` gap (`outcome`, `gap`).
 */
export async function stopAtCap(
  crossing: CapCrossing,
  job: CappedJob,
): Promise<{ above: Gap } | { outcome: CancelOutcome; gap: Gap }> {
  // Crossed by the figures that came with the job's end: nothing left to stop.
  if (job.over) return { above: endedAboveCap(crossing, job.logger) };
  let outcome: CancelOutcome;
  let gap: Gap;
  try {
    outcome = job.cancel
      ? await abortable(job.cancel(), job.signal)
      : { outcome: "transport-only", detail: "The job had no id yet, so it could not be cancelled." };
    gap = capGap(crossing, outcome);
  } catch (error) {
    if (job.signal.aborted) throw job.signal.reason;
    const message = redact(error instanceof Error ? error.message : String(error));
    outcome = { outcome: "pending", detail: `the cancel request failed: ${message}` };
    gap = capGap(crossing, { failed: message });
  }
  job.notify(outcome);
  if (outcome.outcome === "already-terminal") {
    // The provider finished before the cancel: the job completes, above its cap.
    job.logger.warn("the job finished before the spend cap could stop it; it ended above the cap", {
      ...crossing,
    });
    return { above: aboveCapGap(crossing, "finished-first") };
  }
  job.logger.warn("spend cap crossed; job stopped", { ...crossing, outcome: outcome.outcome });
  return { outcome, gap };
}
