import { InvalidRequestError, SondeError } from "../errors.js";
import { Usage } from "../event-schemas.js";
import { type Citation, isTerminal, type JobStatus, type ResearchEvent } from "../events.js";
import { lazySchema } from "../lazy-schema.js";
import { installMockHook, type MockHook } from "../mocks.js";
import type {
  CancelOutcome,
  EngineSession,
  JobSnapshot,
  MappedEvent,
  ResolvedRequest,
  UsageReport,
  WireEvent,
} from "../provider.js";
import type { JobRef } from "../ref.js";
import { UNCOMPILED } from "../transport/fast-json.js";
import { sleep } from "../transport/retry.js";

/** Events a mock may script: anything but the ones the machinery owns (`created`, `done`). */
export type ScriptedEvent = Exclude<MappedEvent, { type: "created" }>;

export interface MockOptions {
  citations?: Citation[];
  /**
   * The job's usage, in the public `Usage` shape (any subset). A `costUSD` is reported as
   * given, labelled `costSource` (default `"provider"`); without one the counts are priced
   * from the catalog (`"estimate"`). Unknown keys throw `InvalidRequestError`.
   */
  usage?: Partial<Usage>;
  /** Events to run before the report streams (searches, phases, thinking…). */
  events?: ScriptedEvent[];
  /** Pause between events, to exercise timeouts, abort and cancel races. @defaultValue 0 */
  delayMs?: number;
  /**
   * Make the job fail. A `SondeError` (e.g. `new RateLimitError(...)`) is thrown the
   * way an engine would throw it, after `created`; `{ code, message }` fails the job
   * in-band like a provider-reported failure. Either way `result()` rejects.
   */
  fail?: SondeError | { code: string; message: string };
  /**
   * Make the submission itself fail, before the job exists: no `created` event, no ref,
   * `created()` and `result()` reject with this error. Give a `SondeError` such as
   * `new AuthenticationError(...)`, `new RateLimitError(...)` or
   * `new IndeterminateSubmissionError(...)`; it is thrown where an engine's submit throws,
   * so the production retry rules apply (a retryable error is resent as it would be).
   * `{ error, times }` fails only the first `times` submissions, then the job runs.
   */
  failSubmit?: SondeError | { error: SondeError; times: number };
  /** Split the report into text events of about this many characters. @defaultValue 40 */
  chunkSize?: number;
}

interface MockRule {
  id: number;
  report: string;
  options: MockOptions;
  match: (request: ResolvedRequest) => boolean;
}

interface MockJobRecord {
  rule: MockRule;
  request: { model: string; query: string };
  /** The scripted events after `created`, in order. */
  events: MappedEvent[];
  /** When the job was created (its `created` event went out); it runs "server-side" from then on. */
  createdAt: number | undefined;
  /** How many scripted events had happened when a cancel landed. */
  cancelledAt: number | undefined;
  /** How many scripted events some stream has delivered (a stream may run ahead of the clock). */
  streamed: number;
  /** Submissions tried so far (each retry of a failed one is another). */
  submits: number;
}

/**
 * How many scripted events have happened "server-side": like a real job, a mock job
 * keeps running once created, streamed or not, one event per `delayMs`.
 */
function happened(record: MockJobRecord): number {
  if (record.createdAt === undefined) return 0;
  const delayMs = record.rule.options.delayMs ?? 0;
  const byClock = delayMs > 0 ? Math.floor((Date.now() - record.createdAt) / delayMs) : record.events.length;
  const count = Math.min(record.events.length, Math.max(byClock, record.streamed));
  return record.cancelledAt === undefined ? count : Math.min(count, record.cancelledAt);
}

/** The job's status as the "provider" sees it now. */
function serverStatus(record: MockJobRecord): JobStatus {
  if (record.cancelledAt !== undefined) return "cancelled";
  if (record.createdAt !== undefined && SondeError.isInstance(record.rule.options.fail)) return "failed";
  let status: JobStatus = "queued";
  const count = happened(record);
  for (let i = 0; i < count; i++) {
    const event = record.events[i]!;
    if (event.type === "status") status = event.status;
  }
  return status;
}

const STATE = Symbol.for("sonde.mockState");
interface MockState {
  rules: MockRule[];
  jobs: Map<string, MockJobRecord>;
  nextRule: number;
  nextJob: number;
}

function state(): MockState {
  const global = globalThis as { [STATE]?: MockState };
  global[STATE] ??= { rules: [], jobs: new Map(), nextRule: 1, nextJob: 1 };
  return global[STATE];
}

function script(rule: MockRule): MappedEvent[] {
  const { options, report } = rule;
  const events: MappedEvent[] = [{ type: "status", status: "running" }, ...(options.events ?? [])];
  if (options.fail && !SondeError.isInstance(options.fail)) {
    events.push(
      { type: "error", error: { code: options.fail.code, message: options.fail.message, retryable: false } },
      { type: "status", status: "failed" },
    );
    return events;
  }
  const size = Math.max(1, options.chunkSize ?? 40);
  for (let i = 0; i < report.length; i += size)
    events.push({ type: "text", delta: report.slice(i, i + size) });
  for (const citation of options.citations ?? []) events.push({ type: "citation", citation });
  events.push({ type: "usage", usage: usageReport(options.usage) });
  events.push({ type: "status", status: "completed" });
  return events;
}

const MockUsage = lazySchema(() => Usage.partial().strict());

/** Checks a scripted usage at `mockResearch()` time, naming any key the `Usage` shape lacks. */
function checkUsage(usage: unknown): void {
  if (usage === undefined) return;
  const parsed = MockUsage.safeParse(usage, UNCOMPILED);
  if (parsed.success) {
    if (parsed.data.costSource !== undefined && parsed.data.costUSD === undefined)
      throw new InvalidRequestError(
        `mockResearch: usage.costSource "${parsed.data.costSource}" needs usage.costUSD; omit both to price the counts from the catalog.`,
      );
    return;
  }
  const unknown = parsed.error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys" ? issue.keys : [],
  );
  if (unknown.length) {
    const hint = unknown.includes("providerCostUSD")
      ? ' (a provider charge is usage.costUSD, costSource "provider")'
      : "";
    throw new InvalidRequestError(
      `mockResearch: unknown usage key${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")}${hint}. ` +
        `usage takes the Usage shape: ${Object.keys(Usage.shape).join(", ")}.`,
    );
  }
  const issue = parsed.error.issues[0]!;
  throw new InvalidRequestError(`mockResearch: usage.${issue.path.join(".")}: ${issue.message}.`);
}

/** The scripted usage as an engine would report it: a given cost is kept as given. */
function usageReport(usage: Partial<Usage> | undefined): UsageReport {
  const { costUSD, costSource = "provider", ...counts } = usage ?? {};
  if (costUSD === undefined) return { inputTokens: 0, outputTokens: 0, ...counts };
  return {
    ...counts,
    ...(costSource === "provider" ? { providerCostUSD: costUSD } : { estimatedCostUSD: costUSD }),
  };
}

/** The error this submission fails with, if `failSubmit` scripts one for it. */
function submitFailure(record: MockJobRecord): SondeError | undefined {
  if (record.createdAt !== undefined) return undefined;
  const scripted = record.rule.options.failSubmit;
  if (!scripted) return undefined;
  const attempt = record.submits++;
  if (SondeError.isInstance(scripted)) return scripted;
  return attempt < scripted.times ? scripted.error : undefined;
}

/** Checks `failSubmit` at `mockResearch()` time: only a typed error can stand for a refused submission. */
function checkFailSubmit(failSubmit: unknown): void {
  if (failSubmit === undefined || SondeError.isInstance(failSubmit)) return;
  const entry = failSubmit as { error?: unknown; times?: unknown };
  if (
    typeof entry === "object" &&
    SondeError.isInstance(entry.error) &&
    Number.isInteger(entry.times) &&
    (entry.times as number) >= 0
  )
    return;
  throw new InvalidRequestError(
    "mockResearch: failSubmit takes a SondeError (e.g. new AuthenticationError(...)) or " +
      "{ error: SondeError, times: n } with n a whole number ≥ 0.",
  );
}

function session(jobId: string, record: MockJobRecord, provider: ResolvedRequest["provider"]): EngineSession {
  const { events } = record;
  const { delayMs = 0, fail } = record.rule.options;
  return {
    // Unknown until the submission succeeds, as for an engine: a refused one never made a job.
    get jobId() {
      return record.createdAt === undefined && record.rule.options.failSubmit ? undefined : jobId;
    },
    // A scripted failure must surface as the job's failure, not as a reconnect loop.
    resumable: !fail,
    cursorRank: (cursor) => Number(cursor),
    resumeState: () => ({ mock: true }),
    async *connect({ cursor, signal }) {
      const from = cursor === undefined ? -1 : Number(cursor);
      if (from < 0) {
        const refused = submitFailure(record);
        if (refused) throw refused;
        record.createdAt ??= Date.now();
        yield {
          cursor: "0",
          data: { type: "created", jobId, provider, model: record.request.model },
        } satisfies WireEvent;
        if (SondeError.isInstance(fail)) throw fail;
      }
      for (let i = Math.max(0, from); i < events.length; i++) {
        if (delayMs > 0) await sleep(delayMs, signal);
        if (record.cancelledAt !== undefined && i >= record.cancelledAt) {
          yield { cursor: String(i + 1), data: { type: "status", status: "cancelled" } };
          return;
        }
        const event = events[i]!;
        record.streamed = Math.max(record.streamed, i + 1);
        yield { cursor: String(i + 1), data: event };
      }
    },
    map(wire) {
      return [wire.data as MappedEvent];
    },
  };
}

const hook: MockHook = {
  claims(request) {
    return state().rules.some((r) => r.match(request));
  },
  start(request) {
    const s = state();
    const rule = [...s.rules].reverse().find((r) => r.match(request));
    if (!rule) return undefined;
    const jobId = `mock_${String(s.nextJob++).padStart(6, "0")}`;
    const record: MockJobRecord = {
      rule,
      request: { model: request.modelInfo.id, query: request.query },
      events: script(rule),
      createdAt: undefined,
      cancelledAt: undefined,
      streamed: 0,
      submits: 0,
    };
    s.jobs.set(jobId, record);
    return session(jobId, record, request.provider);
  },
  attach(ref: JobRef) {
    const record = state().jobs.get(ref.jobId);
    return record && session(ref.jobId, record, ref.provider);
  },
  get(ref: JobRef) {
    const record = state().jobs.get(ref.jobId);
    if (!record) return undefined;
    const status = serverStatus(record);
    const snapshot: JobSnapshot = { provider: ref.provider, model: ref.model, jobId: ref.jobId, status };
    if (status === "completed") {
      snapshot.report = record.rule.report;
      snapshot.citations = record.rule.options.citations ?? [];
    }
    return Promise.resolve(snapshot);
  },
  cancel(ref: JobRef) {
    const record = state().jobs.get(ref.jobId);
    if (!record) return undefined;
    const status = serverStatus(record);
    if (isTerminal(status)) {
      return Promise.resolve<CancelOutcome>({ outcome: "already-terminal", finalStatus: status });
    }
    record.cancelledAt = happened(record);
    return Promise.resolve<CancelOutcome>({ outcome: "cancelled", finalStatus: "cancelled" });
  },
};

export class MockBuilder {
  readonly #report: string;
  readonly #options: MockOptions;
  #conditions: ((request: ResolvedRequest) => boolean)[] = [];

  /** @internal */
  constructor(report: string, options: MockOptions) {
    this.#report = report;
    this.#options = options;
  }

  /** Match requests whose query contains `text` (case-insensitive). */
  whenQueryContains(text: string): this {
    const needle = text.toLowerCase();
    this.#conditions.push((request) => request.query.toLowerCase().includes(needle));
    return this;
  }

  /** Match requests for this model id (`provider:model`). */
  whenModel(id: string): this {
    this.#conditions.push((request) => request.modelInfo.id === id || request.model === id);
    return this;
  }

  /** Match every request. */
  always(): this {
    this.#conditions = [];
    return this;
  }

  /**
   * Starts intercepting `research.start` in every client of this process. Requests
   * still pass validation first (a retired model fails as in production); requests
   * no mock matches go to the real engine. The most recently registered match wins.
   */
  register(): MockHandle {
    const s = state();
    const conditions = [...this.#conditions];
    const rule: MockRule = {
      id: s.nextRule++,
      report: this.#report,
      options: this.#options,
      match: (request) => conditions.every((condition) => condition(request)),
    };
    s.rules.push(rule);
    installMockHook(hook);
    return {
      unregister() {
        s.rules = s.rules.filter((r) => r !== rule);
      },
      get calls() {
        return [...s.jobs.values()].filter((job) => job.rule === rule).map((job) => ({ ...job.request }));
      },
    };
  }
}

export interface MockHandle {
  unregister(): void;
  /** Requests this mock answered, in order. */
  readonly calls: { model: string; query: string }[];
}

/**
 * Scripts a research job for tests of your app: the report streams as `text`
 * events through Sonde's real job machinery, so `toRef()`, `attach()`, `cancel()`
 * and `result()` behave as in production.
 *
 * @example
 * mockResearch("# Findings\n...", { citations: [{ url: "https://example.org" }] })
 *   .whenQueryContains("battery")
 *   .register();
 */
export function mockResearch(report: string, options: MockOptions = {}): MockBuilder {
  checkUsage(options.usage);
  checkFailSubmit(options.failSubmit);
  return new MockBuilder(report, options);
}

/**
 * Removes every registered mock and forgets mock jobs.
 * @example
 * ```ts
 * import { clearMocks, mockResearch } from "sonde/testing";
 *
 * afterEach(() => clearMocks());
 * ```
 */
export function clearMocks(): void {
  const s = state();
  s.rules = [];
  s.jobs.clear();
  installMockHook(undefined);
}

export type { ResearchEvent };
