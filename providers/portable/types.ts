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

/** The outcome of one model, search or fetch operation, written before the result is used. */
export interface Receipt {
  key: string;
  kind: "model" | "search" | "fetch";
  status: "ok" | "error";
  result?: unknown;
  error?: { code: string; message: string } | undefined;
  at: string;
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
  putJob(record: JobRecord): Promise<void>;
  getJob(jobId: string): Promise<JobRecord | undefined>;
  /** Removes the job, its events and its receipts. */
  deleteJob(jobId: string): Promise<void>;
  appendEvent(jobId: string, event: StoredEvent): Promise<void>;
  /** All events of the job, ordered by `index`. */
  readEvents(jobId: string): Promise<StoredEvent[]>;
  /** Writes (or replaces) the receipt with this `key`. */
  putReceipt(jobId: string, receipt: Receipt): Promise<void>;
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
}
