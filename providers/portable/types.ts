/**
 * Public interfaces of the portable engine: the pluggable chat model, search backend,
 * fetcher and job store, and the records the store holds.
 */
import type { JobStatus } from "../../src/events.js";

/** One chat message in OpenAI form. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface ChatRequest {
  /** The chat endpoint's own model name (`openai/gpt-5-mini`). */
  model: string;
  messages: ChatMessage[];
  /** Output-token cap of this response. The loop always passes 4,096. */
  maxTokens: number;
  signal: AbortSignal;
}

export interface ChatResponse {
  content: string;
  /** Why generation stopped, as the endpoint said (`stop`, `length`, …). */
  finishReason?: string | undefined;
  inputTokens?: number | undefined;
  /** Output tokens excluding reasoning tokens. */
  outputTokens?: number | undefined;
  reasoningTokens?: number | undefined;
  /** The endpoint's own charge for the call in USD, where it reports one (OpenRouter). */
  costUSD?: number | undefined;
}

/** What the loop needs from a chat model: one non-streaming completion. */
export interface ChatModel {
  complete(request: ChatRequest): Promise<ChatResponse>;
}

/** One web search result; the loop fetches `url` to read it. */
export interface SearchResult {
  url: string;
  title?: string | undefined;
  snippet?: string | undefined;
}

/** A search backend: any object with this method (or `{ provider: "tavily" | "brave" | "searxng" }`). */
export interface SearchBackend {
  search(query: string, options: { signal: AbortSignal }): Promise<SearchResult[]>;
}

/** A fetched page. `text` is the readable text (not HTML): convert it with `htmlToText` if needed. */
export interface FetchedPage {
  /** The final URL after redirects. */
  url: string;
  text: string;
  contentType: string;
  title?: string | undefined;
  /**
   * How `text` was made: an HTML page's main article, the whole page (no article was
   * found), a PDF's text layer, or the body as it came.
   */
  extraction?: "article" | "whole-page" | "pdf" | "text" | undefined;
  byline?: string | undefined;
  /** Publication date as the page states it (e.g. ISO 8601 from `article:published_time`). */
  publishedAt?: string | undefined;
  /** The page's `<link rel="canonical">`, absolute. */
  canonicalUrl?: string | undefined;
  /** Character encoding the body was decoded with (`UTF-8`, `windows-1252`, `Shift_JIS`, …). */
  encoding?: string | undefined;
  /** PDFs: UTF-16 offset in `text` where page n starts, at index n - 1; citations name their page. */
  pageStarts?: number[] | undefined;
}

/**
 * Fetches one page. The default (`defaultFetcher()`) refuses private-network targets,
 * honours robots.txt and extracts main content, PDF text and charsets.
 */
export interface Fetcher {
  fetch(url: string, options: { signal: AbortSignal }): Promise<FetchedPage>;
}

/** The request as stored with the job: everything that decides what the job does. */
export interface StoredRequest {
  model: string;
  query: string;
  instructions?: string | undefined;
  asOf?: string | undefined;
  output?: string | undefined;
  tools?: unknown[] | undefined;
  sources?:
    | {
        urls?: string[] | undefined;
        documents?: {
          id?: string | undefined;
          title?: string | undefined;
          url?: string | undefined;
          text: string;
        }[];
        web?: boolean | undefined;
        allowDomains?: string[] | undefined;
        denyDomains?: string[] | undefined;
      }
    | undefined;
  budget?:
    | {
        modelCalls?: number | undefined;
        searches?: number | undefined;
        fetches?: number | undefined;
        parallelism?: number | undefined;
        deadlineMs?: number | undefined;
      }
    | undefined;
}

/** A job as the store holds it. */
export interface JobRecord {
  v: 1;
  jobId: string;
  /** Catalog id, `portable:<chat>/<model>`. */
  model: string;
  request: StoredRequest;
  /** Canonical JSON of `request`: two requests are the same when these are equal. */
  requestKey: string;
  idempotencyKey?: string | undefined;
  createdAt: string;
  /** Seven days after `createdAt` (client clock): the job and its receipts are gone after this. */
  expiresAt: string;
  status: JobStatus;
  /** When an execution slot first admitted the job; the deadline counts from here. */
  admittedAt?: string | undefined;
  deadlineAt?: string | undefined;
  /** Written before local work stops; a job with this set ends `cancelled`. */
  cancelRequestedAt?: string | undefined;
}

/** One persisted wire event. `index` is its cursor; `key` makes re-runs append only what is new. */
export interface StoredEvent {
  index: number;
  key: string;
  data: unknown;
  at: string;
}

/**
 * The outcome of one model, search or fetch operation, written before the result is used.
 * `intent` is written just before the call is sent and replaced by its outcome: an intent
 * found on recovery is a call that was in flight when its runner stopped (it may have been
 * billed), which is not repeated unless the attach authorizes it.
 */
export interface Receipt {
  key: string;
  kind: "model" | "search" | "fetch";
  status: "ok" | "error" | "intent";
  result?: unknown;
  error?: { code: string; message: string } | undefined;
  /** The call was refused outright (not billed), so a re-run sends it again. */
  repeat?: boolean | undefined;
  at: string;
}

/**
 * The right to run one job, held by one runner at a time. `token` grows by one with every
 * new holder of the job (a fencing token): a store refuses a write whose fence carries an
 * older token, so a holder that stalled past its lease cannot write once another took over.
 */
export interface Lease {
  holder: string;
  token: number;
  /** Epoch milliseconds, by the store's clock; unrenewed, the lease lapses then. */
  expiresAt: number;
}

/** What a runner's writes carry: the token of the lease it holds. */
export interface Fence {
  token: number;
}

/**
 * Where portable jobs live: the job record, its event log and its receipts. Implement it
 * over a shared database (Redis, SQL) to let many workers serve the same jobs; the
 * built-ins are `createMemoryStore()` and `createFileStore({ dir })` (Node only).
 * Every method must be durable when its promise resolves.
 */
export interface JobStore {
  /** Identifies the underlying storage, so one process runs one loop per stored job. */
  readonly id?: string;
  /** `fence`, when given, makes the write conditional on still holding the job's lease. */
  putJob(record: JobRecord, fence?: Fence): Promise<void>;
  getJob(jobId: string): Promise<JobRecord | undefined>;
  /** Removes the job, its events and its receipts. */
  deleteJob(jobId: string): Promise<void>;
  /**
   * Appends unless an event with this `index` exists (then it is a no-op). A runner appends
   * in index order, one at a time, so a store may rely on that (a Redis Stream does).
   */
  appendEvent(jobId: string, event: StoredEvent, fence?: Fence): Promise<void>;
  /** All events of the job, ordered by `index`. */
  readEvents(jobId: string): Promise<StoredEvent[]>;
  /** Writes (or replaces) the receipt with this `key`. */
  putReceipt(jobId: string, receipt: Receipt, fence?: Fence): Promise<void>;
  readReceipts(jobId: string): Promise<Receipt[]>;
  /**
   * Atomically binds an idempotency key to `jobId` unless it is bound already; returns the
   * job id the key is bound to afterwards.
   */
  claimKey(key: string, jobId: string): Promise<string>;
  /** Unbinds the key if it is bound to `jobId`. */
  releaseKey(key: string, jobId: string): Promise<void>;
  /** Optional housekeeping: remove jobs whose `expiresAt` is before `now`. */
  deleteExpired?(now: Date): Promise<void>;
  /**
   * Leases (all three or none): with them, exactly one process runs a job at a time and
   * the others tail its events; without them, one job must be driven by one process.
   * Takes the job's lease for `holder` unless another holder's lease is still live;
   * returns the lease (a new token), or undefined when another holder has it.
   */
  acquireLease?(jobId: string, holder: string, ttlMs: number): Promise<Lease | undefined>;
  /** Extends the lease; false when it lapsed and another holder took the job. */
  renewLease?(jobId: string, lease: Lease, ttlMs: number): Promise<boolean>;
  /** Gives the lease up, so the next attach takes over at once. */
  releaseLease?(jobId: string, lease: Lease): Promise<void>;
}
