/**
 * The portable engine as a `ResearchAdapter`: a job is a record, an append-only event
 * log and receipts in a job store; `connect` follows the log from a cursor while the
 * in-process runner extends it. Cursors are log indexes (numeric, ranked).
 */
import { IdempotencyConflictError, JobNotFoundError, ProviderJobError } from "../../src/errors.js";
import { isTerminal } from "../../src/events.js";
import type {
  EngineSession,
  MappedEvent,
  ProviderContext,
  ResearchAdapter,
  ResolvedRequest,
  SnapshotReport,
  WireEvent,
} from "../../src/provider.js";
import { DEMO_MODEL, splitModel } from "./checks.js";
import { demoChat, type Resolved, resolveConfig } from "./config.js";
import { storeCall } from "./errors.js";
import { eventKey } from "./keys.js";
import { mapWire } from "./map.js";
import type { Engine, JobRunner } from "./runner.js";
import { checkJobId, logRank, portableSpec, RETENTION_MS } from "./spec.js";
import type { JobRecord, JobStore, StoredEvent, StoredRequest } from "./types.js";

/**
 * The research loop (steps, verification, budgets), loaded when a job first runs, is read or
 * is cancelled here: `import("sonde")` and validation need none of it, and it is the larger
 * part of the engine.
 */
const loadRunner = () => import("./runner.js");

function newJobId(): string {
  return `pj_${crypto.randomUUID().replace(/-/g, "")}`;
}

/** Sorted-key JSON: equal requests give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function storedRequest(request: ResolvedRequest): StoredRequest {
  return JSON.parse(
    JSON.stringify({
      model: request.modelInfo.id,
      query: request.query,
      instructions: request.instructions,
      asOf: request.asOf,
      output: request.output,
      tools: request.tools,
      sources: request.sources,
      budget: request.budget,
    }),
  ) as StoredRequest;
}

interface Place {
  store: JobStore;
  storeKey: string;
  demo: boolean;
}

function placeOf(model: string, config: Resolved): Place {
  const demo = model === `portable:${DEMO_MODEL}`;
  return demo
    ? { store: config.demo.store, storeKey: config.demo.storeKey, demo }
    : { store: config.store, storeKey: config.storeKey, demo };
}

function engineFor(record: JobRecord, config: Resolved): Engine {
  const providerModel = record.model.slice("portable:".length);
  if (providerModel === DEMO_MODEL) {
    return {
      chat: demoChat,
      chatModel: DEMO_MODEL,
      search: config.demo.search,
      fetcher: config.demo.fetcher,
    };
  }
  const { chat, model } = splitModel(providerModel);
  return { chat: config.chatFor(chat), chatModel: model, search: config.search, fetcher: config.fetcher };
}

const sweptAt = new Map<string, number>();

/** Housekeeping at most hourly per store: expired jobs and receipts are deleted. */
function sweep(place: Place, context: ProviderContext): void {
  const now = context.clock();
  const last = sweptAt.get(place.storeKey);
  if (last !== undefined && now.getTime() - last < 3_600_000) return;
  sweptAt.set(place.storeKey, now.getTime());
  place.store.deleteExpired?.(now).catch((error: unknown) => {
    context.logger.debug("portable: expiry sweep failed", { error: (error as Error).message });
  });
}

/** The job's record, or `JobNotFoundError`; an expired job is deleted on sight. */
async function loadRecord(place: Place, jobId: string, context: ProviderContext): Promise<JobRecord> {
  const record = await storeCall(() => place.store.getJob(jobId));
  if (!record) {
    throw new JobNotFoundError(
      `portable: job ${jobId} is not in this job store. Attach with the same portable.store the job was started with (jobs are kept seven days).`,
      { provider: "portable" },
    );
  }
  if (Date.parse(record.expiresAt) <= context.clock().getTime()) {
    await storeCall(async () => {
      if (record.idempotencyKey) await place.store.releaseKey(record.idempotencyKey, jobId);
      await place.store.deleteJob(jobId);
    });
    throw new JobNotFoundError(
      `portable: job ${jobId} expired on ${record.expiresAt} (jobs and their receipts are kept seven days) and was deleted.`,
      { provider: "portable" },
    );
  }
  return record;
}

class PortableSession implements EngineSession {
  readonly resumable = true;
  readonly local = true;
  readonly #context: ProviderContext;
  readonly #config: Resolved;
  readonly #place: Place;
  readonly #begin: () => Promise<string>;
  readonly #repeatInterrupted: boolean;
  #jobId: string | undefined;
  #ready: Promise<string> | undefined;
  #lastRunner: JobRunner | undefined;
  /** Connections of this session following the runner now. */
  #following = 0;

  constructor(
    context: ProviderContext,
    place: Place,
    begin: (session: PortableSession) => Promise<string>,
    repeatInterrupted = false,
  ) {
    this.#context = context;
    this.#config = resolveConfig(context);
    this.#place = place;
    this.#begin = () => begin(this);
    this.#repeatInterrupted = repeatInterrupted;
  }

  get jobId(): string | undefined {
    return this.#jobId;
  }

  /** The research deadline (budget.deadlineMs from admission), for the ref. */
  deadlineAt(): string | undefined {
    return this.#lastRunner?.deadlineAt;
  }

  connect({ cursor, signal }: { cursor: string | undefined; signal: AbortSignal }): AsyncIterable<WireEvent> {
    return this.#follow(cursor, signal);
  }

  async *#follow(cursor: string | undefined, signal: AbortSignal): AsyncGenerator<WireEvent> {
    this.#ready ??= this.#begin().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    const jobId = await this.#ready;
    this.#jobId = jobId;
    const after = cursor === undefined ? -1 : Number(cursor);
    this.#following++;
    try {
      const runner = this.#runner(jobId, (await loadRunner()).runnerFor);
      this.#lastRunner = runner;
      if (this.#repeatInterrupted) runner.authorizeRepeats();
      for await (const event of runner.follow(Number.isInteger(after) ? after : -1, signal)) {
        yield { cursor: String(event.index), data: event.data };
      }
    } finally {
      this.#following--;
    }
  }

  #runner(jobId: string, runnerFor: typeof import("./runner.js").runnerFor) {
    return runnerFor({
      store: this.#place.store,
      storeKey: this.#place.storeKey,
      jobId,
      clock: this.#context.clock,
      logger: this.#context.logger,
      slots: this.#config.slots,
      leaseMs: this.#config.leaseMs,
      engine: (record) => engineFor(record, this.#config),
    });
  }

  /** Pauses the loop here unless another job object in this process still follows it. */
  async detach(): Promise<void> {
    if (!this.#jobId) return;
    const { existingRunner } = await loadRunner();
    await existingRunner(this.#place.storeKey, this.#jobId)?.pause(this.#following);
  }

  map(wire: WireEvent): MappedEvent[] {
    return mapWire(wire.data, this.#context.logger);
  }

  cursorRank(cursor: string): number | undefined {
    return logRank(cursor);
  }

  resumeState(): Record<string, unknown> {
    return {};
  }
}

/** Creates the job (or finds the one its idempotency key names). Runs before any work. */
async function createJob(request: ResolvedRequest, place: Place, context: ProviderContext): Promise<string> {
  const now = context.clock();
  const stored = storedRequest(request);
  const requestKey = canonical(stored);
  const jobId = newJobId();
  const record: JobRecord = {
    v: 1,
    jobId,
    model: request.modelInfo.id,
    request: stored,
    requestKey,
    ...(request.idempotencyKey && { idempotencyKey: request.idempotencyKey }),
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + RETENTION_MS).toISOString(),
    status: "queued",
  };
  sweep(place, context);
  const events: StoredEvent[] = [
    {
      index: 0,
      key: eventKey.created,
      data: { type: "created", jobId, model: record.model },
      at: record.createdAt,
    },
    {
      index: 1,
      key: eventKey.statusQueued,
      data: { type: "status", status: "queued" },
      at: record.createdAt,
    },
  ];
  return storeCall(async () => {
    const { store } = place;
    // The record exists before the key names it, so a key never points at nothing.
    await store.putJob(record);
    for (const event of events) await store.appendEvent(jobId, event);
    const key = request.idempotencyKey;
    if (!key) return jobId;
    for (let attempt = 0; attempt < 3; attempt++) {
      const owner = await store.claimKey(key, jobId);
      if (owner === jobId) return jobId;
      const existing = await store.getJob(owner);
      if (existing && Date.parse(existing.expiresAt) > now.getTime()) {
        await store.deleteJob(jobId);
        if (existing.requestKey !== requestKey) {
          throw new IdempotencyConflictError(
            `portable: idempotencyKey "${key}" already started job ${owner} with a different request. ` +
              "Repeat that request exactly to get the same job back, or use a new key for a new job.",
            { provider: "portable" },
          );
        }
        return owner;
      }
      // The key's job expired or vanished: the key is free again.
      if (existing) await store.deleteJob(owner);
      await store.releaseKey(key, owner);
    }
    throw new ProviderJobError(
      "store_error",
      `portable: could not claim idempotencyKey "${key}"; try again.`,
      {
        provider: "portable",
      },
    );
  });
}

/** The portable engine: its spec (spec.ts) with the calls that need its job store and sessions. */
export const portableAdapter: ResearchAdapter = {
  ...portableSpec,

  start(request, context) {
    const place = placeOf(request.modelInfo.id, resolveConfig(context));
    return new PortableSession(context, place, () => createJob(request, place, context));
  },

  attach(ref, context, options) {
    portableSpec.checkAttach!(ref, context);
    const place = placeOf(ref.model, resolveConfig(context));
    return new PortableSession(
      context,
      place,
      async () => (await loadRecord(place, ref.jobId, context)).jobId,
      options?.repeatInterruptedCalls === true,
    );
  },

  async get(ref, context): Promise<SnapshotReport> {
    checkJobId(ref);
    const place = placeOf(ref.model, resolveConfig(context));
    const record = await loadRecord(place, ref.jobId, context);
    const events = await storeCall(() => place.store.readEvents(ref.jobId));
    const status = (await loadRunner()).terminalStatusOf(events) ?? record.status;
    const snapshot: SnapshotReport = {
      provider: "portable",
      model: record.model,
      jobId: record.jobId,
      status,
    };
    let report = "";
    const citations: NonNullable<SnapshotReport["citations"]> = [];
    for (const event of events) {
      for (const mapped of mapWire(event.data, context.logger)) {
        if (mapped.type === "text") report += mapped.delta;
        else if (mapped.type === "citation") citations.push(mapped.citation);
        else if (mapped.type === "usage") snapshot.usage = mapped.usage;
      }
    }
    if (isTerminal(status)) {
      snapshot.report = report;
      snapshot.citations = citations;
    }
    return snapshot;
  },

  async cancel(ref, context) {
    checkJobId(ref);
    const config = resolveConfig(context);
    const place = placeOf(ref.model, config);
    await loadRecord(place, ref.jobId, context);
    const { runnerFor } = await loadRunner();
    const runner = runnerFor({
      store: place.store,
      storeKey: place.storeKey,
      jobId: ref.jobId,
      clock: context.clock,
      logger: context.logger,
      slots: config.slots,
      leaseMs: config.leaseMs,
      engine: (record) => engineFor(record, config),
    });
    return storeCall(() => runner.cancel());
  },
};
