/** The declarative test server: replies by call number, recorded calls, drops, hangs and gates. */
import { describe, expect, it } from "vitest";
import { sseBlocks, sseData, sseText } from "./sse.js";
import { createTestServer, dropAfter, empty, json, networkError, sse } from "./test-server.js";

const BASE = "https://server.test/v1";
const body = sseText([{ type: "a" }, { type: "b" }, { type: "c" }], { name: (event) => String(event.type) });
const server = createTestServer({ [`GET ${BASE}/always`]: json({ ok: true }) });

const read = async (response: Response) => {
  let text = "";
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      text += decoder.decode(chunk.value, { stream: true });
  } catch (error) {
    return { text, error: (error as Error).message };
  }
  return { text };
};

describe("createTestServer", () => {
  it("answers a reply list by call number, records each call, and names a call past the script", async () => {
    server.route({ [`POST ${BASE}/jobs`]: [json({ id: 1 }, { status: 201 }), empty(204, { "x-n": "2" })] });
    const first = await fetch(`${BASE}/jobs?x=1`, {
      method: "POST",
      headers: { authorization: "Bearer k" },
      body: JSON.stringify({ q: "é" }),
    });
    expect([first.status, await first.json()]).toEqual([201, { id: 1 }]);
    const second = await fetch(`${BASE}/jobs`, { method: "POST", body: "" });
    expect([second.status, second.headers.get("x-n")]).toEqual([204, "2"]);
    const third = await fetch(`${BASE}/jobs`, { method: "POST" });
    expect(third.status).toBe(599);
    expect(await third.json()).toEqual({ error: `test server: unscripted call 3 to POST ${BASE}/jobs` });
    const [call] = server.callsTo(`POST ${BASE}/jobs`);
    expect(call).toMatchObject({ n: 0, method: "POST", json: { q: "é" }, body: '{"q":"é"}' });
    expect(call!.url.searchParams.get("x")).toBe("1");
    expect(call!.headers.get("authorization")).toBe("Bearer k");
    expect(server.calls.map((c) => c.n)).toEqual([0, 1, 2]);
  });

  it("streams SSE in chunks, drops after N blocks, and routes declared for all tests stay", async () => {
    server.route({
      [`GET ${BASE}/stream`]: [sse(body, { chunkSize: 3 }), dropAfter(body, 2)],
      [`GET ${BASE}/gone`]: networkError(),
    });
    const whole = await fetch(`${BASE}/stream`);
    expect(whole.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(await read(whole)).toEqual({ text: body });
    const cut = await read(await fetch(`${BASE}/stream`));
    expect(sseData(cut.text)).toEqual([{ type: "a" }, { type: "b" }]);
    // msw ends the body where the stream failed: the client sees a stream cut short.
    expect(cut.text).toBe(sseBlocks(body).slice(0, 2).join(""));
    await expect(fetch(`${BASE}/gone`)).rejects.toThrow();
    expect(await (await fetch(`${BASE}/always`)).json()).toEqual({ ok: true });
  });

  it("a reply function sees the call; a gate holds the stream; a hanging one ends when the client aborts", async () => {
    let open!: () => void;
    const until = new Promise<void>((resolve) => {
      open = resolve;
    });
    server.route({
      [`GET ${BASE}/items/:id`]: (call) => json({ id: call.params.id, n: call.n }),
      [`GET ${BASE}/held`]: sse(body, { gate: { after: 1, until } }),
      [`GET ${BASE}/hang`]: sse(body, { take: 1, end: "hang" }),
    });
    expect(await (await fetch(`${BASE}/items/x7`)).json()).toEqual({ id: "x7", n: 0 });
    const held = (await fetch(`${BASE}/held`)).body!.getReader();
    expect(new TextDecoder().decode((await held.read()).value)).toBe(sseBlocks(body)[0]);
    open();
    expect(new TextDecoder().decode((await held.read()).value)).toBe(sseBlocks(body).slice(1).join(""));
    const controller = new AbortController();
    const hanging = await fetch(`${BASE}/hang`, { signal: controller.signal });
    const reader = hanging.body!.getReader();
    await reader.read();
    const next = reader.read();
    controller.abort();
    await expect(next).rejects.toThrow();
  });

  it("per-test routes and calls are gone in the next test", async () => {
    expect(server.calls).toEqual([]);
    expect((await fetch(`${BASE}/items/x7`).catch(() => undefined))?.status).not.toBe(200);
  });
});
