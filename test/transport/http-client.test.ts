import { describe, expect, it } from "vitest";
import { InvalidRequestError, RateLimitError, SondeError } from "../../src/errors.js";
import { createHttpClient, toTransportError } from "../../src/transport/http.js";

/** A fetch that records each Request and answers with `answer(request)`. */
function recording(answer: (request: Request) => Response | Promise<Response>) {
  const requests: Request[] = [];
  const fetch = (async (input: Request) => {
    requests.push(input);
    return answer(input);
  }) as unknown as typeof globalThis.fetch;
  return { requests, fetch };
}

function client(fetch: typeof globalThis.fetch, timeoutMs?: number) {
  return createHttpClient({
    provider: "openai",
    baseURL: "http://127.0.0.1:9/v1/",
    headers: { Authorization: "Bearer sk-test", "OpenAI-Project": undefined },
    fetch,
    ...(timeoutMs !== undefined && { timeoutMs }),
  });
}

describe("the HTTP client over fetch", () => {
  it("joins the base URL and path, adds the query, merges headers and sends JSON", async () => {
    const { requests, fetch } = recording(() => Response.json({ ok: true }));
    const http = client(fetch);
    const response = await http.post("/responses", {
      json: { model: "o3" },
      searchParams: { stream: "true", after: undefined },
      headers: { Accept: "text/event-stream", Authorization: undefined },
    });
    expect(await response.json()).toEqual({ ok: true });
    const [request] = requests;
    expect(request!.method).toBe("POST");
    expect(request!.url).toBe("http://127.0.0.1:9/v1/responses?stream=true");
    expect(request!.headers.get("content-type")).toBe("application/json");
    expect(request!.headers.get("accept")).toBe("text/event-stream");
    // A per-call `undefined` removes a client header; an undefined client header is never sent.
    expect(request!.headers.has("authorization")).toBe(false);
    expect(request!.headers.has("openai-project")).toBe(false);
    expect(await request!.json()).toEqual({ model: "o3" });
  });

  it("sends an absolute URL as given, and `.json()` asks for JSON", async () => {
    const { requests, fetch } = recording(() => Response.json([1, 2]));
    const body = await client(fetch).get(new URL("http://127.0.0.1:9/v1/jobs/7")).json<number[]>();
    expect(body).toEqual([1, 2]);
    expect(requests[0]!.url).toBe("http://127.0.0.1:9/v1/jobs/7");
    expect(requests[0]!.headers.get("accept")).toBe("application/json");
    expect(requests[0]!.headers.get("authorization")).toBe("Bearer sk-test");
  });

  it("turns a failed status into the typed error, with the body's message and Retry-After", async () => {
    const { fetch } = recording(() =>
      Response.json(
        { error: { message: "slow down", code: "rate_limit_exceeded" } },
        { status: 429, headers: { "retry-after": "3", "x-request-id": "req_1" } },
      ),
    );
    const error = await client(fetch)
      .get("responses/x")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 3000, requestId: "req_1" });
    expect((error as Error).message).toContain("slow down");
  });

  it.each([
    [401, "Incorrect API key provided.", "AuthenticationError", /provided\. Check the openai API key\.$/],
    [
      404,
      "Response with id 'resp_x' not found.",
      "JobNotFoundError",
      /found\. openai has no such job \(expired, deleted/,
    ],
    [
      500,
      "The server had an error. Sorry about that!",
      "ProviderUnavailableError",
      /that! A failure on openai's side, usually brief: try again later\.$/,
    ],
    [503, "Service unavailable", "ProviderUnavailableError", /unavailable\. A failure on openai's side/],
  ])(
    "a %i says what to do after the provider's own sentence, with one full stop",
    async (status, text, name, shape) => {
      const { fetch } = recording(() => Response.json({ error: { message: text } }, { status }));
      const error = await client(fetch)
        .get("responses/resp_x")
        .catch((e: unknown) => e);
      expect((error as Error).name).toBe(name);
      expect((error as Error).message).toMatch(shape);
      expect((error as Error).message).not.toContain("..");
    },
  );

  it("reads a non-JSON error body as text, and returns the response with throwHttpErrors: false", async () => {
    const { fetch } = recording(() => new Response("bad field", { status: 400 }));
    const error = await client(fetch)
      .post("x", { json: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toContain("bad field");
    const response = await client(fetch).post("x", { json: {}, throwHttpErrors: false });
    expect(response.status).toBe(400);
  });

  it("times out a request whose headers do not come, aborting it, as a retryable interruption", async () => {
    let aborted = false;
    const { fetch } = recording(
      (request) =>
        new Promise<Response>((_, reject) =>
          request.signal.addEventListener("abort", () => {
            aborted = true;
            reject(request.signal.reason);
          }),
        ),
    );
    const error = await client(fetch, 20)
      .get("slow")
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe("TimeoutError");
    expect(aborted).toBe(true);
    const mapped = toTransportError(error, "openai");
    expect(SondeError.isInstance(mapped) && mapped.retryable).toBe(true);
  });

  it("passes the caller's abort through to fetch", async () => {
    const { requests, fetch } = recording(
      (request) =>
        new Promise<Response>((_, reject) =>
          request.signal.addEventListener("abort", () => reject(request.signal.reason)),
        ),
    );
    const controller = new AbortController();
    const pending = client(fetch)
      .get("stream", { signal: controller.signal })
      .catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error("user stop"));
    expect(((await pending) as Error).message).toBe("user stop");
    expect(requests[0]!.signal.aborted).toBe(true);
  });
});
