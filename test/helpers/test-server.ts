/**
 * One declarative msw server for the provider tests: routes (`"POST <url>"`) map to
 * replies, a reply list answers by call number (the first call gets the first), and every
 * call is recorded (method, url, headers, body) for assertions. A reply is a transcript:
 * an SSE body (recorded or generated, in network-sized chunks, optionally dropped after N
 * blocks, left hanging or held at a gate), a JSON body, a status with headers, or a
 * network error. Call `createTestServer()` at the top of a test file: it listens before
 * the file's tests, drops per-test routes and calls after each test, and closes after all.
 */
import { type HttpHandler, HttpResponse, http } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll } from "vitest";
import { fixture, fixtureJson } from "./fixtures.js";
import { sseBlocks } from "./sse.js";

export interface SseReply {
  type: "sse";
  /** The whole stream body (a fixture's text or `sseText(...)`). */
  body: string;
  status?: number;
  headers?: Record<string, string>;
  /** Bytes per network read, so events and multi-byte characters straddle reads. @defaultValue the whole body at once */
  chunkSize?: number;
  /** Serve only the first N blocks (events and keepalive comments). */
  take?: number;
  /**
   * After the body: `close` ends it cleanly, `drop` fails it like a connection the other
   * side cut (a mid-stream drop), `hang` keeps it open until the client gives up.
   * @defaultValue "close"
   */
  end?: "close" | "drop" | "hang";
  /** Hold the stream after `after` blocks until `until` settles. */
  gate?: { after: number; until: Promise<unknown> };
}

export interface JsonReply {
  type: "json";
  body: unknown;
  status?: number;
  headers?: Record<string, string>;
}

export interface EmptyReply {
  type: "empty";
  status: number;
  headers?: Record<string, string>;
}

/** The connection fails before any answer (msw's network error). */
export interface NetworkErrorReply {
  type: "network-error";
}

export type Reply = SseReply | JsonReply | EmptyReply | NetworkErrorReply;

export interface TestServerCall {
  /** The route key that answered, e.g. `POST https://api.openai.test/v1/responses/:id`. */
  route: string;
  /** 0 for the route's first call. */
  n: number;
  method: string;
  url: URL;
  headers: Headers;
  /** The request body as sent ("" when none). */
  body: string;
  /** The body parsed as JSON (undefined when empty). */
  json: unknown;
  /** `performance.now()` when it arrived. */
  at: number;
  params: Record<string, string | readonly string[] | undefined>;
}

/** A route's answer: one reply for every call, a list by call number, or a function of the call. */
export type RouteResponse =
  | Reply
  | readonly Reply[]
  | ((call: TestServerCall) => Reply | Response | Promise<Reply | Response>);

export type Routes = Record<string, RouteResponse>;

// ---------------------------------------------------------------------------------------
// Reply builders

export const sse = (body: string, options: Omit<SseReply, "type" | "body"> = {}): SseReply => ({
  type: "sse",
  body,
  ...options,
});

/** A recorded transcript under test/fixtures (e.g. `gemini/research.sse`). */
export const sseFixture = (path: string, options: Omit<SseReply, "type" | "body"> = {}): SseReply =>
  sse(fixture(path), options);

/** The first `events` blocks of `body`, then the connection cut. */
export const dropAfter = (body: string, events: number, options: Omit<SseReply, "type" | "body"> = {}) =>
  sse(body, { ...options, take: events, end: "drop" });

export const json = (body: unknown, init: Omit<JsonReply, "type" | "body"> = {}): JsonReply => ({
  type: "json",
  body,
  ...init,
});

/** A recorded JSON body under test/fixtures, e.g. an error body with its status. */
export const jsonFixture = (path: string, init: Omit<JsonReply, "type" | "body"> = {}): JsonReply =>
  json(fixtureJson(path), init);

export const empty = (status: number, headers?: Record<string, string>): EmptyReply => ({
  type: "empty",
  status,
  ...(headers && { headers }),
});

export const networkError = (): NetworkErrorReply => ({ type: "network-error" });

// ---------------------------------------------------------------------------------------

const encoder = new TextEncoder();

function sseStream(reply: SseReply, signal: AbortSignal): ReadableStream<Uint8Array> {
  const blocks = sseBlocks(reply.body);
  const served = reply.take === undefined ? blocks : blocks.slice(0, reply.take);
  const enqueue = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
    const bytes = encoder.encode(text);
    const size = reply.chunkSize ?? bytes.length;
    for (let i = 0; i < bytes.length; i += Math.max(1, size)) controller.enqueue(bytes.slice(i, i + size));
  };
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const gate = reply.gate;
      const before = gate ? served.slice(0, gate.after) : served;
      enqueue(controller, before.join(""));
      if (gate) {
        await gate.until;
        // The client may have gone while the stream was held: nothing left to send to.
        if (signal.aborted) return;
        try {
          enqueue(controller, served.slice(gate.after).join(""));
        } catch {
          return;
        }
      }
      const end = reply.end ?? "close";
      if (end === "close") {
        try {
          controller.close();
        } catch {
          // Already closed by the client's disconnect.
        }
      }
      // On a later tick, so the blocks already sent are read first, as over a socket.
      else if (end === "drop")
        setTimeout(() => controller.error(new TypeError("terminated: other side closed")), 1);
      else signal.addEventListener("abort", () => controller.error(signal.reason), { once: true });
    },
  });
}

function toResponse(reply: Reply | Response, signal: AbortSignal): Response {
  if (reply instanceof Response) return reply;
  switch (reply.type) {
    case "sse":
      return new HttpResponse(sseStream(reply, signal), {
        status: reply.status ?? 200,
        headers: { "content-type": "text/event-stream; charset=utf-8", ...reply.headers },
      });
    case "json":
      return HttpResponse.json(reply.body as never, {
        status: reply.status ?? 200,
        ...(reply.headers && { headers: reply.headers }),
      });
    case "empty":
      return new HttpResponse(null, {
        status: reply.status,
        ...(reply.headers && { headers: reply.headers }),
      });
    case "network-error":
      return HttpResponse.error();
  }
}

const METHODS = {
  GET: http.get,
  POST: http.post,
  DELETE: http.delete,
  PUT: http.put,
  PATCH: http.patch,
  ALL: http.all,
} as const;

export interface TestServer {
  /** Every call answered by a route, in arrival order. */
  readonly calls: TestServerCall[];
  /** The calls one route answered (`"POST <url>"`, as declared): a live list, filled as calls arrive. */
  callsTo(route: string): TestServerCall[];
  /** Adds or replaces routes for the current test (dropped after it). */
  route(routes: Routes): void;
  /** Raw msw handlers for the current test (e.g. `providerHandlers.<engine>()`), ahead of the routes. */
  use(...handlers: HttpHandler[]): void;
  /** Drops this test's routes and handlers now (the recorded calls stay). */
  reset(): void;
}

/** msw handlers for `routes`, each call recorded into `calls` (for a façade over these routes). */
export function routeHandlers(routes: Routes, calls: TestServerCall[]): HttpHandler[] {
  return Object.entries(routes).map(([key, response]) =>
    handlerFor(key, response, (call) => calls.push(call)),
  );
}

function handlerFor(
  key: string,
  response: RouteResponse,
  record: (call: TestServerCall) => void,
): HttpHandler {
  const [method, url] = key.split(" ", 2) as [keyof typeof METHODS, string];
  const define = METHODS[method];
  if (!define || !url) throw new Error(`test server: route "${key}" is not "METHOD url"`);
  let count = 0;
  return define(url, async ({ request, params }) => {
    const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.clone().text();
    const call: TestServerCall = {
      route: key,
      n: count++,
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      body,
      json: body ? JSON.parse(body) : undefined,
      at: performance.now(),
      params,
    };
    record(call);
    const reply =
      typeof response === "function"
        ? await response(call)
        : Array.isArray(response)
          ? response[call.n]
          : (response as Reply);
    if (!reply)
      return HttpResponse.json(
        { error: `test server: unscripted call ${call.n + 1} to ${key}` },
        { status: 599 },
      );
    return toResponse(reply, request.signal);
  });
}

/**
 * The server for one test file. `routes` answer in every test; `route()` adds or
 * replaces some for one test. An unscripted call fails the test (msw `onUnhandledFrame`),
 * and a reply list that runs out answers 599 naming the route.
 */
export function createTestServer(routes: Routes = {}): TestServer {
  const calls: TestServerCall[] = [];
  const byRoute = new Map<string, TestServerCall[]>();
  const callsTo = (route: string) => {
    const list = byRoute.get(route) ?? [];
    byRoute.set(route, list);
    return list;
  };
  const record = (call: TestServerCall) => {
    calls.push(call);
    callsTo(call.route).push(call);
  };
  const handlersOf = (table: Routes) =>
    Object.entries(table).map(([key, response]) => handlerFor(key, response, record));
  const server = setupServer();
  const reset = () => server.resetHandlers(...handlersOf(routes));
  beforeAll(() => {
    reset();
    server.listen({ onUnhandledFrame: "error" });
  });
  afterEach(() => {
    reset();
    calls.length = 0;
    for (const list of byRoute.values()) list.length = 0;
  });
  afterAll(() => server.close());
  return {
    calls,
    callsTo,
    route: (table) => server.use(...handlersOf(table)),
    use: (...handlers) => server.use(...handlers),
    reset,
  };
}
