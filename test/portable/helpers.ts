/**
 * Test kit for the portable engine: a scripted OpenAI-compatible chat endpoint (msw,
 * answering from the real prompts), a scripted search backend and fetcher that count
 * their calls, and a client configured the way a user would.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HttpResponse, http } from "msw";
import { demoAnswer } from "../../providers/portable/demo/model.js";
import type { Fetcher, SearchBackend, SearchResult } from "../../providers/portable/index.js";
import { readPrompt, type Task } from "../../providers/portable/prompts.js";
import { type PortableSettings, type ResearchEvent, type ResearchJob, Sonde } from "../../src/index.js";

export const CHAT_URL = "http://chat.test/v1";
export const API_KEY = "sk-test-portable-0123456789abcdef";
export const MODEL = "portable:local/test-model";

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/portable/${name}`, import.meta.url), "utf8");
export const fixtureJson = <T = unknown>(name: string): T => JSON.parse(fixture(name)) as T;

export interface Page {
  url: string;
  title: string;
  text: string;
}
export const web: Page[] = fixtureJson<Page[]>("web.json");
export const page = (host: string) => web.find((p) => p.url.includes(host))!;

export interface ChatCall {
  task: Task | undefined;
  input: Record<string, unknown>;
  sources: Map<string, string>;
  body: {
    model: string;
    messages: { role: string; content: string }[];
    max_tokens?: number;
    [k: string]: unknown;
  };
  headers: Headers;
  /** Aborted when the client gives up on the call. */
  signal: AbortSignal;
}

/** What a scripted task answers: model text (string or JSON value), or an HTTP failure. */
export type Reply = string | Record<string, unknown> | { httpStatus: number; body: unknown };

export type Script = Partial<Record<Task, (call: ChatCall, n: number) => Reply | Promise<Reply>>>;

/**
 * An OpenAI-compatible `POST /chat/completions` that answers the loop's real prompts: by
 * default like the offline demo model (extractive, exact quotes), per task as scripted.
 * Every response is the recorded chat-completion fixture with its content replaced.
 */
export function scriptedChat(script: Script = {}, baseURL = CHAT_URL) {
  const calls: ChatCall[] = [];
  const template = fixtureJson<Record<string, unknown>>("chat-completion.json");
  const handler = http.post(`${baseURL}/chat/completions`, async ({ request }) => {
    const body = (await request.json()) as ChatCall["body"];
    const { input, sources } = readPrompt(body.messages as never);
    const task = input.task as Task | undefined;
    const call: ChatCall = { task, input, sources, body, headers: request.headers, signal: request.signal };
    calls.push(call);
    const n = calls.filter((c) => c.task === task).length - 1;
    const scripted = task ? script[task] : undefined;
    const reply = scripted ? await scripted(call, n) : demoAnswer(body.messages as never);
    if (typeof reply === "object" && "httpStatus" in reply) {
      return HttpResponse.json(reply.body as never, { status: reply.httpStatus as number });
    }
    const content = typeof reply === "string" ? reply : JSON.stringify(reply);
    const response = structuredClone(template) as { choices: { message: { content: string } }[] };
    response.choices[0]!.message.content = content;
    return HttpResponse.json(response as never);
  });
  return {
    handler,
    calls,
    count: (task?: Task) => calls.filter((c) => task === undefined || c.task === task).length,
  };
}

/** A search backend returning `results(query)` (default: every page), counting calls. */
export function scriptedSearch(results: (query: string) => SearchResult[] = () => web.map(toResult)) {
  const queries: string[] = [];
  const backend: SearchBackend = {
    async search(query, { signal }) {
      if (signal.aborted) throw signal.reason;
      queries.push(query);
      return results(query);
    },
  };
  return { backend, queries };
}

export const toResult = (p: Page): SearchResult => ({
  url: p.url,
  title: p.title,
  snippet: p.text.slice(0, 80),
});

/** A fetcher serving `pages` by URL (unknown URLs fail like a 404), counting calls. */
export function scriptedFetcher(pages: Page[] = web) {
  const urls: string[] = [];
  const fetcher: Fetcher = {
    async fetch(url, { signal }) {
      if (signal.aborted) throw signal.reason;
      urls.push(url);
      const found = pages.find((p) => p.url === url);
      if (!found) throw new Error("HTTP 404 Not Found");
      return { url, text: found.text, contentType: "text/plain", title: found.title };
    },
  };
  return { fetcher, urls };
}

export interface ClientOptions {
  /** Any value, valid or not: tests of the run-time checks pass wrong ones. */
  search?: unknown;
  fetcher?: Fetcher | undefined;
  /** Any value, valid or not (see search). */
  store?: unknown;
  clock?: () => Date;
  maxConcurrentJobs?: number;
  leaseMs?: number;
  fetch?: typeof globalThis.fetch;
}

/** A client as a user would build it for a local chat endpoint. */
export function portableClient(options: ClientOptions = {}): Sonde {
  return new Sonde({
    env: {},
    portable: {
      chat: { local: { baseURL: CHAT_URL, apiKey: API_KEY } },
      ...(options.search !== undefined && { search: options.search as PortableSettings["search"] }),
      ...(options.fetcher !== undefined && { fetcher: options.fetcher }),
      ...(options.store !== undefined && { store: options.store as PortableSettings["store"] }),
      ...(options.maxConcurrentJobs !== undefined && { maxConcurrentJobs: options.maxConcurrentJobs }),
      ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    },
    ...(options.clock && { clock: options.clock }),
    ...(options.fetch && { fetch: options.fetch }),
    retry: { attempts: 3, minDelayMs: 1, maxDelayMs: 10 },
    idleTimeoutMs: 2_000,
  });
}

export async function collect(job: ResearchJob): Promise<ResearchEvent[]> {
  const events: ResearchEvent[] = [];
  for await (const event of job) events.push(event);
  return events;
}

export async function tempDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "sonde-portable-test-"));
  // A job may still be writing its final record when a test ends: retry past ENOTEMPTY.
  return { dir, remove: () => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 }) };
}

/** A promise with its resolve function, to hold a scripted call until the test says so. */
export function gate() {
  let open!: () => void;
  let hit!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const reached = new Promise<void>((resolve) => {
    hit = resolve;
  });
  return { open, hit, opened, reached };
}

/** Every citation's offsets slice a non-empty claim of the report, without its marker. */
export function spans(report: string, events: ResearchEvent[]): string[] {
  return events.flatMap((e) =>
    e.type === "citation" && e.citation.startIndex !== undefined && e.citation.endIndex !== undefined
      ? [report.slice(e.citation.startIndex, e.citation.endIndex)]
      : [],
  );
}
