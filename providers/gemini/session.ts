/**
 * One Deep Research interaction: submit (POST, streamed), follow it after a drop the way
 * the Gemini docs prescribe (GET the interaction; if it is over, read the stored result,
 * else reconnect with `last_event_id`), and poll with backoff when resuming fails or is
 * refused, so that the report is never lost (WIRE.md §8).
 */
import {
  IndeterminateSubmissionError,
  ProviderUnavailableError,
  SondeError,
  StreamInterruptedError,
} from "../../src/errors.js";
import type { ConnectOptions, EngineSession, MappedEvent, ProviderContext } from "../../src/provider.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import { FINAL_CURSOR } from "../../src/transport/final-cursor.js";
import { type HttpClient, submitOnce } from "../../src/transport/http.js";
import { pollUntilTerminal } from "../../src/transport/poll.js";
import { parseData, readSseBatches, sseParser } from "../../src/transport/sse.js";
import { describeError } from "./errors.js";
import { GeminiMapper, type GeminiWire, matchStepText } from "./map.js";
import type { CreateInteractionBody } from "./request.js";
import { isTerminalStatus, WireError, WireInteraction } from "./wire.js";

/** Resumes in a row that bring nothing new before Sonde stops streaming and polls instead. */
const STALLS_BEFORE_POLLING = 2;

/** Where an attached job's earlier delivery stopped (from its ref). */
export interface AttachPoint {
  cursor: string | undefined;
  /** UTF-16 length of the report text already delivered. */
  text: number;
  /** Citation events already delivered. */
  citations: number;
  /** Result steps (finished searches, pages, tool calls) whose events were delivered. */
  results: number;
  /**
   * The ref was taken on the batch that ended the job: its streamed terminal batch, all of it
   * delivered, or the stored result (`FINAL_CURSOR`), in part or whole, with `text` and
   * `citations` counting up to it. That batch is replayed under the ref's cursor; the core
   * skips what of it was delivered.
   */
  ended?: boolean;
  /** Cursor of the streamed event that ended the job, as the ref's `resume` had it. */
  endedAt?: string | undefined;
}

export interface SessionInit {
  context: ProviderContext;
  http: HttpClient;
  /** Catalog id, `gemini:<agent>`. */
  model: string;
  includeThinking: boolean;
  /** A new job: the body to submit. */
  body?: CreateInteractionBody;
  /** An attached job. */
  jobId?: string;
  attach?: AttachPoint;
}

/**
 * Gemini sends no `event_id` on the first lifecycle events, and real Deep Research streams
 * also leave it off some deltas (WIRE.md §6, G11). A stable stand-in lets the core deduplicate such
 * events when a stream is replayed and place a ref taken on one; it is never sent back as
 * `last_event_id`. Lifecycle events are named by what they are; any other event by its
 * position after the last real id of its connection (a resume after id X replays the same
 * events after X, so the positions match).
 */
function lifecycleCursor(type: string | undefined, data: unknown): string | undefined {
  const record = data as { index?: unknown; status?: unknown };
  switch (type) {
    case "interaction.created":
    case "interaction.start":
      return "~created";
    case "interaction.status_update":
      return `~status:${String(record.status)}`;
    case "step.start":
    case "content.start":
      return `~start:${String(record.index)}`;
    case "step.stop":
    case "content.stop":
      return `~stop:${String(record.index)}`;
    case "interaction.completed":
    case "interaction.complete":
      return "~completed";
    default:
      return undefined;
  }
}

function eventFields(data: unknown): {
  type: string | undefined;
  id: string | undefined;
  jobId: string | undefined;
} {
  if (!data || typeof data !== "object") return { type: undefined, id: undefined, jobId: undefined };
  const record = data as {
    event_type?: unknown;
    event_id?: unknown;
    interaction_id?: unknown;
    interaction?: { id?: unknown } | null;
  };
  const id = typeof record.event_id === "string" && record.event_id ? record.event_id : undefined;
  const jobId =
    typeof record.interaction?.id === "string" && record.interaction.id
      ? record.interaction.id
      : typeof record.interaction_id === "string" && record.interaction_id
        ? record.interaction_id
        : undefined;
  return { type: typeof record.event_type === "string" ? record.event_type : undefined, id, jobId };
}

export class GeminiSession implements EngineSession {
  readonly resumable = true;
  readonly #init: SessionInit;
  readonly #mapper: GeminiMapper;
  #jobId: string | undefined;
  #submitted = false;
  #polling = false;
  #stalls = 0;
  #pastRef = false;
  /** The last real `event_id` mapped: where a resumed stream continues. */
  #lastEventId: string | undefined;
  /** Cursor of the streamed event that ended the job (a final snapshot has none). */
  #endedAt: string | undefined;

  constructor(init: SessionInit) {
    this.#init = init;
    this.#jobId = init.jobId;
    this.#endedAt = init.attach?.endedAt;
    this.#mapper = new GeminiMapper({
      model: init.model,
      includeThinking: init.includeThinking,
      logger: init.context.logger,
      ...(init.attach && { resultsDelivered: init.attach.results }),
    });
  }

  get jobId(): string | undefined {
    return this.#jobId;
  }

  connect({ cursor, signal }: ConnectOptions): AsyncIterable<GeminiWire | GeminiWire[]> {
    return this.#jobId === undefined ? this.#submit(signal) : this.#follow(cursor, signal);
  }

  map(wire: GeminiWire): MappedEvent[] {
    const attach = this.#init.attach;
    // Where the core's attach suppression ends: at the ref's cursor, or at any other snapshot.
    if (attach?.cursor !== undefined && (wire.cursor === attach.cursor || wire.snapshot))
      this.#pastRef = true;
    if (wire.cursor !== undefined && !wire.standIn) this.#lastEventId = wire.cursor;
    const ended = this.#mapper.terminal;
    const events = this.#mapper.map(wire);
    if (!ended && this.#mapper.terminal && wire.cursor !== undefined) this.#endedAt = wire.cursor;
    return events;
  }

  resumeState(): Record<string, unknown> {
    const thinking = this.#init.includeThinking ? {} : { thinking: false };
    const attach = this.#init.attach;
    // Until the replay reaches the ref's cursor, what was delivered is what the ref said.
    if (attach?.cursor !== undefined && !this.#pastRef)
      return {
        text: attach.text,
        citations: attach.citations,
        trail: attach.results,
        ...(attach.endedAt !== undefined && { endedAt: attach.endedAt }),
        ...thinking,
      };
    const last = this.#mapper.lastBatch;
    return {
      text: this.#mapper.textLength,
      citations: this.#mapper.citationCount,
      trail: Math.max(this.#mapper.results, attach?.results ?? 0),
      ...(last?.cursor !== undefined && { last }),
      ...(this.#endedAt !== undefined && { endedAt: this.#endedAt }),
      ...thinking,
    };
  }

  async *#submit(signal: AbortSignal): AsyncGenerator<GeminiWire | GeminiWire[]> {
    if (this.#submitted) throw this.#indeterminate("the submission was already sent once");
    const { http, body } = this.#init;
    await sseParser("gemini");
    const response = await submitOnce("gemini", signal, () =>
      http.post("interactions", { json: body, headers: { accept: "text/event-stream" }, signal }),
    );
    this.#submitted = true;
    try {
      if (response.headers.get("content-type")?.includes("application/json")) {
        // A server that answers the create with the Interaction instead of a stream.
        const interaction = WireInteraction.safeParse(await response.json(), UNCOMPILED).data;
        if (!interaction?.id) throw new Error("the create response had no interaction id");
        this.#jobId = interaction.id;
        yield { cursor: "~created", data: { event_type: "interaction.created", interaction }, standIn: true };
        yield* this.#follow(undefined, signal);
        return;
      }
      yield* this.#read(response, signal);
    } catch (error) {
      if (this.#jobId === undefined && !signal.aborted)
        throw this.#indeterminate(error instanceof Error ? error.message : String(error), error);
      throw error;
    }
    if (this.#jobId === undefined) throw this.#indeterminate("the stream ended before the interaction id");
  }

  #indeterminate(detail: string, cause?: unknown): IndeterminateSubmissionError {
    return new IndeterminateSubmissionError(
      `gemini: the job was submitted but its interaction id never arrived (${detail}). It may be running and billing; ` +
        "Sonde did not resend it. Check your interactions in Google AI Studio before submitting again.",
      { provider: "gemini", cause },
    );
  }

  /**
   * SSE events of one connection, one array per network read; ends at `interaction.completed`,
   * `[DONE]` or the end of the body.
   */
  async *#read(
    response: Response,
    signal: AbortSignal,
    resumedAfter?: string,
  ): AsyncGenerator<GeminiWire | GeminiWire[]> {
    const { context } = this.#init;
    let anchor = resumedAfter ?? "^";
    let sinceAnchor = 0;
    for await (const messages of readSseBatches(response, {
      provider: "gemini",
      idleTimeoutMs: context.idleTimeoutMs,
      signal,
    })) {
      const batch: GeminiWire[] = [];
      for (const message of messages) {
        // Nearly every event: a text delta, read without building its payload (built if read).
        const step = matchStepText(message.data);
        if (step) {
          anchor = step.event.eventId;
          sinceAnchor = 0;
          batch.push(step);
          continue;
        }
        const data = parseData(message, "gemini");
        if (data === undefined) {
          if (message.data.trim() === "[DONE]") {
            if (batch.length > 0) yield batch;
            return;
          }
          continue;
        }
        const fields = eventFields(data);
        // Known before the event is handed on, so a drop right after it resumes instead of failing.
        this.#jobId ??= fields.jobId;
        const real = fields.id ?? (message.id || undefined);
        if (fields.type === "error") {
          if (batch.length > 0) yield batch;
          yield* this.#onError(data, real, signal);
          return;
        }
        if (real !== undefined) {
          anchor = real;
          sinceAnchor = 0;
          batch.push({ cursor: real, data });
        } else {
          const standIn = lifecycleCursor(fields.type, data) ?? `${anchor}+${++sinceAnchor}`;
          batch.push({ cursor: standIn, data, standIn: true });
        }
        if (fields.type === "interaction.completed" || fields.type === "interaction.complete") {
          yield batch;
          return;
        }
      }
      if (batch.length > 0) yield batch;
    }
  }

  /**
   * An `error` event may be about the stream rather than the job (WIRE.md §9: "GET the interaction
   * to learn its status"): a finished interaction yields its stored result, a running one
   * is resumed, and only when the status cannot be read does the event end the job.
   */
  async *#onError(
    data: unknown,
    cursor: string | undefined,
    signal: AbortSignal,
  ): AsyncGenerator<GeminiWire | GeminiWire[]> {
    const error = WireError.safeParse((data as { error?: unknown }).error, UNCOMPILED).data ?? {};
    let interaction: WireInteraction | undefined;
    if (this.#jobId !== undefined) {
      try {
        interaction = await this.#get(signal);
      } catch (failure) {
        if (signal.aborted) throw failure;
        this.#init.context.logger.debug("gemini: could not read the interaction after an error event", {
          error: (failure as Error).message,
        });
      }
    }
    if (interaction && isTerminalStatus(interaction.status)) {
      yield* this.#final(interaction, error);
      return;
    }
    if (interaction) {
      const { message } = describeError(error, "stream error");
      throw new StreamInterruptedError(
        `${message} (the interaction is still ${interaction.status ?? "running"}; resuming)`,
        { provider: "gemini" },
      );
    }
    yield { cursor, data };
  }

  async #get(signal: AbortSignal): Promise<WireInteraction> {
    const id = this.#jobId!;
    const body = await this.#init.http
      .get(`interactions/${encodeURIComponent(id)}`, { headers: { accept: "application/json" }, signal })
      .json();
    const parsed = WireInteraction.safeParse(body, UNCOMPILED);
    if (!parsed.success)
      throw new ProviderUnavailableError("gemini: the interaction could not be read (unexpected body)", {
        provider: "gemini",
      });
    return parsed.data;
  }

  /** `cursor` undefined replays from the start (attach); otherwise the stream continues after the last real id. */
  async *#follow(cursor: string | undefined, signal: AbortSignal): AsyncGenerator<GeminiWire | GeminiWire[]> {
    const lastEventId = cursor === undefined ? undefined : this.#lastEventId;
    const interaction = await this.#get(signal);
    if (isTerminalStatus(interaction.status)) {
      yield* this.#final(interaction);
      return;
    }
    if (this.#polling) {
      yield* this.#poll(signal);
      return;
    }
    const before = this.#mapper.productiveBatches;
    let failure: unknown;
    try {
      const response = await this.#init.http.get(`interactions/${encodeURIComponent(this.#jobId!)}`, {
        searchParams: { stream: "true", ...(lastEventId !== undefined && { last_event_id: lastEventId }) },
        headers: { accept: "text/event-stream" },
        signal,
      });
      yield* this.#read(response, signal, lastEventId);
    } catch (error) {
      if (signal.aborted) throw error;
      failure = error;
    }
    if (this.#mapper.terminal) return;
    if (this.#mapper.productiveBatches > before) {
      this.#stalls = 0;
      if (failure !== undefined) throw failure;
      return; // the core reconnects from the new cursor
    }
    // Nothing new: the resume failed or was refused (a known failure mode: a resumed stream
    // that replays a couple of events and hangs). Poll until the interaction ends instead.
    const refused = SondeError.isInstance(failure) && !failure.retryable && failure.status !== undefined;
    if (refused || ++this.#stalls >= STALLS_BEFORE_POLLING) {
      this.#init.context.logger.debug("gemini: resuming the stream failed; polling the interaction", {
        error: failure instanceof Error ? failure.message : undefined,
      });
      this.#polling = true;
      yield* this.#poll(signal);
      return;
    }
    throw (
      failure ??
      new StreamInterruptedError("gemini: the resumed stream ended without new events", {
        provider: "gemini",
      })
    );
  }

  async *#poll(signal: AbortSignal): AsyncGenerator<GeminiWire | GeminiWire[]> {
    for await (const interaction of pollUntilTerminal({
      provider: "gemini",
      fetch: async (s) => ({ value: await this.#get(s) }),
      isTerminal: (value) => isTerminalStatus(value.status),
      policy: this.#init.context.retry,
      signal,
      logger: this.#init.context.logger,
    })) {
      if (isTerminalStatus(interaction.status)) {
        yield* this.#final(interaction);
        return;
      }
      yield { data: interaction, local: { kind: "poll" } };
    }
  }

  /** The stored result, after what an attached job had delivered before its restart. */
  *#final(interaction: WireInteraction, error?: WireError): Generator<GeminiWire> {
    const attach = this.#init.attach;
    if (attach?.cursor !== undefined && !this.#pastRef) {
      yield {
        data: interaction,
        local: { kind: "catch-up", text: attach.text, citations: attach.citations },
      };
      if (attach.ended) {
        // The ref was taken on the ending: under the ref's cursor, the core skips what of it was delivered.
        yield { cursor: attach.cursor, data: interaction, standIn: true, local: { kind: "snapshot", error } };
        return;
      }
    }
    // A stable cursor, so that a ref taken part-way through its events can resume after them
    // (a stand-in: never sent back as `last_event_id`).
    yield {
      cursor: FINAL_CURSOR,
      data: interaction,
      snapshot: true,
      standIn: true,
      local: { kind: "snapshot", error },
    };
  }
}
