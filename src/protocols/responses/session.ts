/**
 * One background response of the Responses protocol, as the core sees it. The first
 * `connect` submits (once, ever); later ones resume the stream after the core's cursor
 * (`GET …/{id}?stream=true&starting_after=N`), or poll when the model is poll-only, when
 * the server refuses to stream an old response, or when resumed streams keep ending
 * without a terminal event. The provider's engine supplies paths, HTTP client and dialect.
 */
import type { ModelInfo } from "../../../catalog/schema.js";
import { IndeterminateSubmissionError, SondeError, StreamInterruptedError } from "../../errors.js";
import { loadOnce } from "../../load-once.js";
import type {
  ConnectOptions,
  EngineSession,
  MappedEvent,
  ProviderContext,
  WireEvent,
} from "../../provider.js";
import { UNCOMPILED } from "../../transport/fast-json.js";
import { FINAL_CURSOR } from "../../transport/final-cursor.js";
import { type HttpClient, submitOnce } from "../../transport/http.js";
import { parseRetryAfter } from "../../transport/retry.js";
import { type EventSourceMessage, parseData, readSseBatches, sseParser } from "../../transport/sse.js";
import type { ResponsesEngine } from "./dialect.js";
import { decodeStreamEvent, execTextDelta, responseOf, textDeltaOf } from "./events.js";
import { type DecodedWireEvent, type EmittedCounts, type LastBatch, ResponseMapper } from "./mapper.js";
import { sequenceRank } from "./spec.js";
import { isTerminalWireStatus, terminalEventTypes } from "./status.js";
import { WireResponse } from "./wire.js";

/** Streams that end cleanly without a terminal event before Sonde polls instead. */
const MAX_EARLY_ENDS = 2;

const deltaRun = loadOnce(() => import("./delta-run.js"));

export interface SessionInit {
  engine: ResponsesEngine;
  context: ProviderContext;
  model: ModelInfo;
  /** Catalog id for `created` (the ref's model on attach). */
  catalogId: string;
  includeThinking: boolean;
  /** Poll although the model streams (a provider setting); kept in the ref. */
  pollOnly?: boolean;
  /** Set when starting: the create body. */
  body?: Record<string, unknown>;
  /**
   * Set when attaching. `delivered`: what was delivered before the ref's position (see the
   * adapter's `attachPoint`); `resume`: the ref's own counts, kept as they were until the
   * job is past the ref. `polling`: the job had fallen back to polling (so its stream is not
   * replayed). `endedAt`: the cursor of the streamed event that ended the job; `atEnd`: the
   * ref was taken on that event, whose batch is then replayed under the ref's cursor (the
   * core skips what of it was delivered), with `delivered` counting up to it.
   */
  attached?: {
    jobId: string;
    cursor: string | undefined;
    delivered: EmittedCounts;
    resume: EmittedCounts & { last?: LastBatch };
    polling?: boolean;
    endedAt?: string;
    atEnd?: boolean;
  };
}

type SnapshotEvent = WireEvent & { snapshot?: true };

export class ResponsesSession implements EngineSession {
  /** Background responses outlive the connection: resume or poll. */
  readonly resumable = true;
  readonly #engine: ResponsesEngine;
  readonly #provider: ResponsesEngine["dialect"]["provider"];
  readonly #context: ProviderContext;
  readonly #http: HttpClient;
  readonly #mapper: ResponseMapper;
  readonly #body: Record<string, unknown> | undefined;
  readonly #pollOnly: boolean;
  readonly #forcedPollOnly: boolean;
  readonly #refCursor: string | undefined;
  readonly #delivered: EmittedCounts;
  readonly #includeThinking: boolean;
  /** The ref's own `resume` counts (attached): what a new ref says until the job is past the ref. */
  readonly #refResume: (EmittedCounts & { last?: LastBatch }) | undefined;
  /** The job has reached the ref's position: a new ref describes what this session delivered. */
  #pastRef: boolean;
  /** The ref was taken on the event that ended the job: its batch is replayed under the ref's cursor. */
  readonly #atEnd: boolean;
  /** Cursor of the streamed event that ended the job. */
  #endedAt: string | undefined;
  #jobId: string | undefined;
  /**
   * The connection's text deltas may be joined (`ConnectOptions.coalesce`): those ranked
   * after `after`, the cursor it resumed from; the ones a resume repeats stay single, so
   * that the core still drops them.
   */
  #coalesce: { after: number; DeltaRun: typeof import("./delta-run.js").DeltaRun } | undefined;
  /** delta-run.js loading for this connection (an earlier connection's must not set `#coalesce`). */
  #joining: Promise<unknown> | undefined;
  #submitted = false;
  #fallback = false;
  #earlyEnds = 0;

  constructor(init: SessionInit) {
    this.#engine = init.engine;
    this.#provider = init.engine.dialect.provider;
    this.#context = init.context;
    this.#http = init.engine.endpoints.http(init.context);
    this.#mapper = new ResponseMapper({
      dialect: init.engine.dialect,
      model: init.catalogId,
      includeThinking: init.includeThinking,
      logger: init.context.logger,
      ...(init.attached && { jobId: init.attached.jobId, trailDelivered: init.attached.delivered.trail }),
    });
    this.#body = init.body;
    this.#includeThinking = init.includeThinking;
    this.#forcedPollOnly = init.pollOnly === true;
    this.#pollOnly =
      this.#forcedPollOnly || init.model.capabilities.pollOnly || !init.model.capabilities.streaming;
    this.#jobId = init.attached?.jobId;
    this.#refCursor = init.attached?.cursor;
    this.#delivered = init.attached?.delivered ?? { reportLength: 0, citations: 0, trail: 0 };
    this.#endedAt = init.attached?.endedAt;
    this.#atEnd = this.#endedAt !== undefined && init.attached?.atEnd === true;
    this.#refResume = init.attached?.resume;
    this.#pastRef = this.#refCursor === undefined;
    if (this.#jobId) this.#submitted = true;
    this.#fallback = init.attached?.polling === true && !this.#pollOnly;
  }

  get jobId(): string | undefined {
    return this.#jobId ?? this.#mapper.jobId;
  }

  /** `sequence_number` orders events; it only increases (gaps allowed). */
  cursorRank(cursor: string): number | undefined {
    return sequenceRank(cursor);
  }

  /** How much of the report was delivered, for a poll fallback after attach (no secret here). */
  resumeState(): Record<string, unknown> {
    const emitted = this.#mapper.emitted;
    const last = this.#mapper.lastBatch;
    // Until the job reaches the ref's position, what was delivered is what the ref said.
    const counts =
      !this.#pastRef && this.#refResume
        ? this.#refResume
        : {
            reportLength: Math.max(emitted.reportLength, this.#delivered.reportLength),
            citations: Math.max(emitted.citations, this.#delivered.citations),
            trail: Math.max(emitted.trail, this.#delivered.trail),
            ...(last?.cursor !== undefined && { last }),
          };
    return {
      ...counts,
      // Only when turned off, so an attached job keeps the same events.
      ...(!this.#includeThinking && { includeThinking: false }),
      // Delivered text came from a snapshot, not the stream: replaying the stream would repeat it.
      ...(this.#fallback && { polling: true }),
      ...(this.#endedAt !== undefined && { endedAt: this.#endedAt }),
      ...(this.#forcedPollOnly && { pollOnly: true }),
    };
  }

  map(wire: WireEvent): MappedEvent[] {
    if (!this.#pastRef) this.#pastRef = this.#reachesRef(wire);
    const ended = this.#mapper.terminal;
    const events = this.#mapper.map(wire);
    // A streamed ending has its event's cursor; a final snapshot has FINAL_CURSOR.
    if (!ended && this.#mapper.terminal && wire.cursor !== undefined) this.#endedAt = wire.cursor;
    return events;
  }

  /** Whether the core delivers this wire event's events (in part, or all): as its attach suppression decides. */
  #reachesRef(wire: WireEvent): boolean {
    if (wire.snapshot || wire.cursor === undefined) return wire.snapshot === true;
    if (wire.cursor === this.#refCursor) return true;
    const rank = this.cursorRank(wire.cursor);
    const refRank = this.#refCursor === undefined ? undefined : this.cursorRank(this.#refCursor);
    return rank !== undefined && refRank !== undefined && rank > refRank;
  }

  async *connect({ cursor, signal, coalesce }: ConnectOptions): AsyncGenerator<WireEvent | WireEvent[]> {
    const after = cursor === undefined ? Number.NEGATIVE_INFINITY : sequenceRank(cursor);
    this.#coalesce = undefined;
    // Loaded by the first result()-only job (an app that iterates never needs it), while the
    // request is on its way. Reads are not held for it (a reset discards a body's unread
    // bytes): until it is there, and in a bundle that lost it, deltas go one at a time.
    const joining: Promise<unknown> | undefined =
      coalesce && after !== undefined
        ? deltaRun().then(
            (module) => {
              // Only for this connection (an earlier one's load may settle late).
              if (this.#joining === joining) this.#coalesce = { after, DeltaRun: module.DeltaRun };
            },
            (error: unknown) => {
              this.#context.logger.debug(
                `${this.#provider}: delta-run.js did not load; reading deltas one by one`,
                {
                  error: (error as Error)?.message,
                },
              );
            },
          )
        : undefined;
    this.#joining = joining;
    if (this.jobId === undefined) {
      if (this.#submitted) {
        // The core retries before an id only after errors that prove nothing was created, and
        // #submit never throws those once its POST was answered; a resend here could bill twice.
        throw this.#indeterminate("the submission was sent before and its answer was lost");
      }
      yield* this.#submit(signal);
      return;
    }
    if (this.#pollOnly || this.#fallback || this.#earlyEnds >= MAX_EARLY_ENDS) {
      if (!this.#pollOnly && !this.#fallback) {
        this.#context.logger.debug(`${this.#provider}: resumed streams keep ending early; polling instead`, {
          jobId: this.jobId,
        });
      }
      this.#fallback = !this.#pollOnly;
      yield* this.#poll(signal, true);
      return;
    }
    yield* this.#resume(cursor, signal);
  }

  #indeterminate(detail: string, cause?: unknown): IndeterminateSubmissionError {
    return new IndeterminateSubmissionError(
      `${this.#provider}: the job was submitted but ${detail}, so its response id is unknown. It may be running and billing; ` +
        `Sonde did not resend it. Check the dashboard (${this.#engine.endpoints.dashboardHint}) before submitting again.`,
      { provider: this.#provider, ...(cause !== undefined && { cause }) },
    );
  }

  async *#submit(signal: AbortSignal): AsyncGenerator<WireEvent | WireEvent[]> {
    const body = this.#body ?? {};
    // A status-line error (429, 5xx) proves nothing was created; submitOnce rethrows it typed.
    const response = await this.#create(body, signal);
    this.#submitted = true;
    try {
      if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
        // The background POST without streaming (poll-only models) answers with the Response.
        const parsed = WireResponse.safeParse(await response.json(), UNCOMPILED);
        if (!parsed.success) throw this.#indeterminate("its answer held no response id");
        this.#jobId = parsed.data.id;
        if (isTerminalWireStatus(parsed.data.status)) {
          yield* this.#snapshotEvents(parsed.data, parsed.data);
          return;
        }
        yield { data: parsed.data };
        yield* this.#poll(signal, false);
        return;
      }
      yield* this.#read(response, signal);
    } catch (error) {
      if (this.jobId === undefined && !IndeterminateSubmissionError.isInstance(error) && !signal.aborted) {
        throw this.#indeterminate("the connection dropped before the response id arrived", error);
      }
      throw error;
    }
    if (this.jobId === undefined)
      throw this.#indeterminate("the stream ended before the response id arrived");
  }

  /** The create POST, sent once: a status line that proves nothing either is indeterminate too. */
  async #create(body: Record<string, unknown>, signal: AbortSignal): Promise<Response> {
    if (body.stream === true) await sseParser(this.#provider);
    try {
      return await submitOnce(this.#provider, signal, () =>
        this.#http.post(this.#engine.endpoints.createPath(this.#context), {
          json: body,
          signal,
          ...(body.stream === true && { headers: { Accept: "text/event-stream" } }),
        }),
      );
    } catch (error) {
      if (
        SondeError.isInstance(error) &&
        !IndeterminateSubmissionError.isInstance(error) &&
        this.#engine.endpoints.isIndeterminateCreateFailure?.(error)
      ) {
        this.#submitted = true;
        throw new IndeterminateSubmissionError(
          `${this.#provider}: the job submission failed with ${error.status ?? "an error"} (${error.message}). ` +
            `The run may have been created and be billing; Sonde did not resend it. Check ${this.#engine.endpoints.dashboardHint} before submitting again.`,
          {
            provider: this.#provider,
            ...(error.status !== undefined && { status: error.status }),
            ...(error.requestId !== undefined && { requestId: error.requestId }),
            cause: error,
          },
        );
      }
      throw error;
    }
  }

  async *#resume(cursor: string | undefined, signal: AbortSignal): AsyncGenerator<WireEvent | WireEvent[]> {
    let response: Response;
    try {
      response = await this.#http.get(this.#engine.endpoints.responsePath(this.#context, this.jobId!), {
        searchParams: { stream: "true", ...(cursor !== undefined && { starting_after: cursor }) },
        headers: { Accept: "text/event-stream" },
        signal,
      });
    } catch (error) {
      if (!this.#engine.endpoints.isStreamRefused(error)) throw error;
      this.#context.logger.debug(`${this.#provider}: the server no longer streams this response; polling`, {
        jobId: this.jobId,
        error: (error as Error).message,
      });
      this.#fallback = true;
      yield* this.#poll(signal, true);
      return;
    }
    yield* this.#read(response, signal);
  }

  /** One array of wire events per network read (see `readSseBatches`). */
  async *#read(response: Response, signal: AbortSignal): AsyncGenerator<WireEvent[]> {
    for await (const messages of readSseBatches(response, {
      provider: this.#provider,
      idleTimeoutMs: this.#context.idleTimeoutMs,
      signal,
    })) {
      const read = this.#decode(messages);
      if (read.batch.length > 0) yield read.batch; // with a malformed event: what arrived before it
      if (read.error !== undefined) throw read.error;
      if (read.ended) return; // the core stops pulling after a terminal event
    }
    // A clean end without a terminal event is not success: the core resumes, and we poll after a few.
    this.#earlyEnds++;
    this.#context.logger.debug(`${this.#provider}: stream ended without a terminal event`, {
      jobId: this.jobId,
      earlyEnds: this.#earlyEnds,
    });
  }

  /**
   * One read's messages as wire events, decoded once (the mapper receives typed events), in
   * a plain loop: optimized early in a run, where a loop inside the async generator is not.
   * Stops after a terminal event (`ended`) or at a malformed one (`error`, after the rest).
   */
  #decode(messages: readonly EventSourceMessage[]): { batch: WireEvent[]; ended: boolean; error?: unknown } {
    const batch: WireEvent[] = [];
    const run = this.#coalesce && new this.#coalesce.DeltaRun(batch, this.#coalesce.after);
    for (const message of messages) {
      // Nearly every event: a text delta, read without JSON.parse (fast-json.ts: its payload,
      // the decoded event too, is built from the match); else JSON.parse builds it once, here.
      const delta = execTextDelta(message.data);
      if (delta) {
        if (run) run.add(delta);
        else batch.push(textDeltaOf(delta));
        continue;
      }
      run?.end();
      let data: unknown;
      try {
        data = parseData(message, this.#provider);
      } catch (error) {
        return { batch, ended: false, error };
      }
      const event = decodeStreamEvent(data);
      if (!event) continue; // `[DONE]` or an empty data line
      if (this.#jobId === undefined) this.#jobId = responseOf(event)?.id;
      const sequence = event.sequence_number;
      const wire: DecodedWireEvent = {
        cursor: typeof sequence === "number" ? String(sequence) : undefined,
        data,
        event,
      };
      batch.push(wire);
      const type = event.type === "unknown" ? event.wireType : event.type;
      if (terminalEventTypes.has(type)) return { batch, ended: true };
    }
    run?.end();
    return { batch, ended: false };
  }

  async *#poll(signal: AbortSignal, immediate: boolean): AsyncGenerator<WireEvent> {
    const path = this.#engine.endpoints.responsePath(this.#context, this.jobId!);
    // The poller loads with the first poll: most streamed jobs never poll.
    const { pollUntilTerminal } = await import("../../transport/poll.js");
    const snapshots = pollUntilTerminal({
      provider: this.#provider,
      fetch: async (pollSignal) => {
        const response = await this.#http.get(path, { signal: pollSignal });
        const parsed = WireResponse.safeParse(await response.json(), UNCOMPILED);
        if (!parsed.success) {
          throw new StreamInterruptedError(`${this.#provider}: a poll answer held no Response object`, {
            provider: this.#provider,
          });
        }
        return {
          value: parsed.data,
          retryAfterMs: parseRetryAfter(response.headers, this.#context.clock()),
        };
      },
      isTerminal: (value) => isTerminalWireStatus(value.status),
      policy: this.#context.retry,
      signal,
      immediate,
      logger: this.#context.logger,
    });
    for await (const snapshot of snapshots) {
      if (!isTerminalWireStatus(snapshot.status)) yield { data: snapshot };
      else yield* this.#snapshotEvents(snapshot, snapshot);
    }
  }

  /** A terminal snapshot: see FINAL_CURSOR for poll-only jobs; a prefix + `snapshot` after a fallback. */
  *#snapshotEvents(response: WireResponse, data: unknown): Generator<WireEvent> {
    if (this.#pollOnly) {
      yield { cursor: FINAL_CURSOR, data };
      return;
    }
    // After attach the mapper may not have seen text delivered before the ref was taken. It
    // is replayed just below the ref's cursor (the core suppresses but aggregates it),
    // then the rest ends suppression as a snapshot.
    const prefix = this.#mapper.deliveredPrefix(response, this.#delivered);
    if (prefix && this.#refCursor !== undefined) {
      // Just before the ref's position (an opaque one such as FINAL_CURSOR: any other name).
      const rank = this.cursorRank(this.#refCursor);
      yield {
        cursor: rank === undefined ? `${this.#refCursor}:delivered` : String(rank - 0.5),
        data: prefix,
      };
    }
    if (this.#atEnd) {
      // The ref was taken on the job's ending: under the ref's cursor, the core skips what of it was delivered.
      yield { cursor: this.#refCursor, data };
      return;
    }
    // A stable cursor, so that a ref taken part-way through its events can resume after them.
    const snapshot: SnapshotEvent = { cursor: FINAL_CURSOR, data, snapshot: true };
    yield snapshot;
  }
}
