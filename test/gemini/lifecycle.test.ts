/**
 * A job's life beyond one stream, as a user drives it: restart and attach (streamed
 * replay, or the stored result when the replay is refused), follow-ups, cancel (and
 * cancel racing completion), abort, get, and the safety of refs and errors.
 */
import { describe, expect, it } from "vitest";
import { AuthenticationError, InvalidRefError, JobAbortedError, JobNotFoundError } from "../../src/errors.js";
import type { ResearchEvent } from "../../src/events.js";
import type { JobRef } from "../../src/ref.js";
import { createTestServer, json, sse } from "../helpers/test-server.js";
import {
  blocks,
  client,
  collect,
  droppedResponse,
  errorResponse,
  fixture,
  fixtureJson,
  geminiServer,
  KEY,
  reportOf,
  running,
} from "./helpers.js";

const server = createTestServer();

const research = fixture("research.sse");
const stored = fixtureJson("research.interaction.json");
const jobId = stored.id as string;
const model = "gemini:deep-research-preview-04-2026";
const strip = (events: ResearchEvent[]) => events.map(({ seq: _seq, ...rest }) => rest);

async function baseline(): Promise<ResearchEvent[]> {
  server.use(...geminiServer({ create: () => sse(research) }).handlers);
  const events = await collect(client().research.start({ model, query: "q" }));
  server.reset();
  return events;
}

/** Runs a job until `stop` events were delivered and returns them with the ref, as JSON would store it. */
async function runUntil(stop: number): Promise<{ before: ResearchEvent[]; ref: JobRef }> {
  const { handlers } = geminiServer({ create: () => sse(research) });
  server.use(...handlers);
  const job = client().research.start({ model, query: "q" });
  const before: ResearchEvent[] = [];
  for await (const event of job) {
    before.push(event);
    if (before.length === stop) break;
  }
  const ref = JSON.parse(JSON.stringify(job.toRef())) as JobRef;
  await expect(job.result()).rejects.toSatisfy((e) => JobAbortedError.isInstance(e));
  server.reset();
  return { before, ref };
}

describe("gemini: restart and attach", () => {
  it("attach(ref) in a new process replays the stream from the start and delivers exactly what the first process had not", async () => {
    const expected = await baseline();
    const citationAt = expected.findIndex((e) => e.type === "citation");
    for (const stop of [3, 12, 30, citationAt + 2, expected.length - 2]) {
      const { before, ref } = await runUntil(stop);
      expect(JSON.stringify(ref)).not.toContain(KEY);
      const { handlers, requests } = geminiServer({
        get: () => json(running(stored)),
        stream: () => sse(research),
      });
      server.use(...handlers);
      const attached = client().research.attach(ref);
      const rest = await collect(attached);
      expect(requests.every((r) => r.method === "GET")).toBe(true);
      expect(
        requests.find((r) => r.url.searchParams.has("stream"))?.url.searchParams.has("last_event_id"),
      ).toBe(false);
      expect(strip([...before, ...rest])).toEqual(strip(expected));
      expect(rest.map((e) => e.seq)).toEqual(rest.map((_, i) => i));
      const result = await attached.result();
      expect(result.report).toBe(reportOf(expected));
      expect(result.citations).toHaveLength(4);
      server.reset();
    }
  });

  it("attach when the replay is refused: polls, then delivers only the part of the stored report that was not delivered before", async () => {
    const expected = await baseline();
    const full = reportOf(expected);
    const texts = expected.filter((e) => e.type === "text");
    const citationAt = expected.findIndex((e) => e.type === "citation");
    const stops = [expected.indexOf(texts[1]!) + 1, expected.indexOf(texts[3]!) + 1, citationAt + 2];
    for (const stop of stops) {
      const { before, ref } = await runUntil(stop);
      const { handlers, requests } = geminiServer({
        get: (call) => json(call < 2 ? running(stored) : stored),
        stream: () => errorResponse("error-resume-refused.json", 400),
      });
      server.use(...handlers);
      const attached = client().research.attach(ref);
      const rest = await collect(attached);
      expect(requests.filter((r) => r.url.searchParams.has("stream"))).toHaveLength(1);
      // Nothing delivered twice, nothing lost.
      expect(reportOf(before) + reportOf(rest)).toBe(full);
      const cited = [...before, ...rest].filter((e) => e.type === "citation");
      expect(cited.map((e) => e.citation)).toEqual(
        expected.filter((e) => e.type === "citation").map((e) => e.citation),
      );
      expect(rest.at(-1)).toMatchObject({ type: "done", status: "completed" });
      // result() covers the whole job, including what was delivered before the restart.
      const result = await attached.result();
      expect(result.report).toBe(full);
      expect(result.citations).toHaveLength(4);
      expect(result.usage.searches).toBe(78);
      server.reset();
    }
  });

  it("attach after the job finished reads the stored result and delivers only the rest", async () => {
    const expected = await baseline();
    const stop = expected.findIndex((e) => e.type === "text") + 2;
    const { before, ref } = await runUntil(stop);
    const { handlers, requests } = geminiServer({ get: () => json(stored) });
    server.use(...handlers);
    const attached = client().research.attach(ref);
    const rest = await collect(attached);
    expect(requests).toHaveLength(1);
    expect(reportOf(before) + reportOf(rest)).toBe(reportOf(expected));
    expect((await attached.result()).report).toBe(reportOf(expected));
  });

  it("attach with a ref taken after the last event before done delivers nothing again, only done", async () => {
    const expected = await baseline();
    server.use(...geminiServer({ create: () => sse(research) }).handlers);
    const job = client().research.start({ model, query: "q" });
    let ref!: JobRef;
    for await (const event of job) {
      // What an app does: persist the ref after each event (here, the last one before done).
      if (event.type !== "done") ref = JSON.parse(JSON.stringify(job.toRef()));
    }
    server.reset();
    const { handlers } = geminiServer({ get: () => json(stored) });
    server.use(...handlers);
    const attached = client().research.attach(ref);
    const rest = await collect(attached);
    expect(rest.map((e) => e.type)).toEqual(["done"]);
    expect(rest.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const result = await attached.result();
    expect(result.report).toBe(reportOf(expected));
    expect(result.citations).toHaveLength(4);
    expect(result.usage.searches).toBe(78);
  });

  it.each([
    ["after its text", "text"],
    ["after its first citation", "citation"],
    ["after its usage", "usage"],
  ] as const)(
    "a ref taken part-way through the stored result's events (%s) resumes after exactly those",
    async (_label, stopType) => {
      // The stream drops once the job has finished: the rest comes from the stored interaction, as one batch.
      const script = () => ({
        create: () => droppedResponse(blocks(research).slice(0, 26).join("")),
        get: () => json(stored),
      });
      server.use(...geminiServer(script()).handlers);
      const whole = await collect(client().research.start({ model, query: "q" }));
      const fromStored = (e: ResearchEvent) => (e.rawEvent as { steps?: unknown }).steps !== undefined;
      expect(whole.filter((e) => e.type === stopType && fromStored(e))).not.toHaveLength(0);
      server.reset();

      server.use(...geminiServer(script()).handlers);
      const job = client().research.start({ model, query: "q" });
      const before: ResearchEvent[] = [];
      for await (const event of job) {
        before.push(event);
        if (event.type === stopType && fromStored(event)) break; // the process dies here
      }
      const ref = JSON.parse(JSON.stringify(job.toRef())) as JobRef;
      server.reset();

      server.use(...geminiServer({ get: () => json(stored) }).handlers);
      const attached = client().research.attach(ref);
      const rest = await collect(attached);
      // Together, exactly the uninterrupted run: nothing lost, nothing twice.
      expect(strip([...before, ...rest])).toEqual(strip(whole));
      const result = await attached.result();
      expect(result.report).toBe(reportOf(whole));
      expect(result.citations).toHaveLength(4);
    },
  );

  it("a ref taken after a drop and an automatic resume attaches cleanly too", async () => {
    const expected = await baseline();
    const { handlers } = geminiServer({
      create: () => droppedResponse(blocks(research).slice(0, 25).join("")),
      get: () => json(running(stored)),
      stream: () => errorResponse("error-resume-refused.json", 400),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const before: ResearchEvent[] = [];
    for await (const event of job) {
      before.push(event);
      if (event.type === "text") break;
    }
    const ref = job.toRef();
    server.reset();
    server.use(...geminiServer({ get: () => json(running(stored)), stream: () => sse(research) }).handlers);
    const rest = await collect(client().research.attach(ref));
    expect(reportOf(before) + reportOf(rest)).toBe(reportOf(expected));
  });

  it("a ref whose resume field was tampered with is refused, naming the field, before anything is sent", async () => {
    const expected = await baseline();
    const { ref } = await runUntil(expected.findIndex((e) => e.type === "text") + 2);
    const { handlers, requests } = geminiServer({ get: () => json(stored) });
    server.use(...handlers);
    // Read as "nothing delivered", this ref would deliver the whole stored report again.
    const error = (() => {
      try {
        client().research.attach({ ...ref, resume: { ...ref.resume, text: "lots" } });
      } catch (e) {
        return e;
      }
    })();
    expect(InvalidRefError.isInstance(error)).toBe(true);
    expect((error as InvalidRefError).field).toBe("resume.text");
    expect(requests).toHaveLength(0);
  });
});

describe("gemini: follow-ups", () => {
  it("previousJobId continues a completed interaction through previous_interaction_id", async () => {
    const { handlers, requests } = geminiServer({ create: () => sse(research) });
    server.use(...handlers);
    const result = await client()
      .research.start({ model, query: "Now compare with the US rules.", previousJobId: jobId })
      .result();
    expect(result.status).toBe("completed");
    const body = JSON.parse(requests[0]!.body);
    expect(body.previous_interaction_id).toBe(jobId);
    expect(body.store).toBe(true); // a follow-up needs the earlier turn stored
    expect(body.input).toBe("Now compare with the US rules.");
  });
});

describe("gemini: cancel, abort, get", () => {
  it("cancel(ref) POSTs the provider's cancel and confirms only the observed cancelled status", async () => {
    const { handlers, requests } = geminiServer({
      cancel: () => json({ ...running(stored), status: "cancelled" }),
    });
    server.use(...handlers);
    const ref: JobRef = {
      v: 1,
      provider: "gemini",
      model,
      jobId,
      createdAt: "2026-07-01T10:00:00Z",
      resume: {},
    };
    expect(await client().research.cancel(ref)).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    expect(requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      `POST /v1beta/interactions/${jobId}/cancel`,
    ]);
  });

  it("a cancel Gemini accepts while the interaction still reports in_progress is pending, not cancelled", async () => {
    server.use(...geminiServer({ cancel: () => json(running(stored)) }).handlers);
    const ref: JobRef = {
      v: 1,
      provider: "gemini",
      model,
      jobId,
      createdAt: "2026-07-01T10:00:00Z",
      resume: {},
    };
    const outcome = await client().research.cancel(ref);
    expect(outcome.outcome).toBe("pending");
    expect(outcome.detail).toMatch(/in_progress/);
  });

  it("a refused cancel of a finished interaction says the job already ended, and how", async () => {
    server.use(
      ...geminiServer({
        cancel: () => errorResponse("error-cancel-not-running.json", 400),
        get: () => json(stored),
      }).handlers,
    );
    const ref: JobRef = {
      v: 1,
      provider: "gemini",
      model,
      jobId,
      createdAt: "2026-07-01T10:00:00Z",
      resume: {},
    };
    expect(await client().research.cancel(ref)).toMatchObject({
      outcome: "already-terminal",
      finalStatus: "completed",
    });
  });

  it("a cancel method answering 404 for a running interaction is reported as transport-only, not as a cancel", async () => {
    const { handlers } = geminiServer({
      cancel: () =>
        json({ error: { code: 404, message: "Method not found.", status: "NOT_FOUND" } }, { status: 404 }),
      get: () => json(running(stored)),
    });
    server.use(...handlers);
    const ref: JobRef = {
      v: 1,
      provider: "gemini",
      model,
      jobId,
      createdAt: "2026-07-01T10:00:00Z",
      resume: {},
    };
    const outcome = await client().research.cancel(ref);
    expect(outcome.outcome).toBe("transport-only");
    expect(outcome.detail).toMatch(/keeps running, and billing/);
  });

  it("cancelling an interaction Gemini does not know is a JobNotFoundError", async () => {
    const notFound = () =>
      json({ error: { code: 404, message: "Not found.", status: "NOT_FOUND" } }, { status: 404 });
    server.use(...geminiServer({ cancel: notFound, get: notFound }).handlers);
    const ref: JobRef = {
      v: 1,
      provider: "gemini",
      model,
      jobId: "v1_gone",
      createdAt: "2026-07-01T10:00:00Z",
      resume: {},
    };
    const error = await client()
      .research.cancel(ref)
      .catch((e) => e);
    expect(JobNotFoundError.isInstance(error)).toBe(true);
  });

  it("job.cancel() mid-stream stops the interaction server-side and ends the job cancelled", async () => {
    const part = blocks(research).slice(0, 25).join("");
    let cancelled = false;
    const { handlers, requests } = geminiServer({
      // The interaction keeps running: the stream stays open.
      create: () => sse(part, { end: "hang" }),
      cancel: () => {
        cancelled = true;
        return json({ ...running(stored), status: "cancelled" });
      },
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events: ResearchEvent[] = [];
    for await (const event of job) {
      events.push(event);
      if (event.type === "text")
        expect(await job.cancel()).toEqual({ outcome: "cancelled", finalStatus: "cancelled" });
    }
    expect(cancelled).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    expect((await job.result()).status).toBe("cancelled");
    expect(requests.filter((r) => r.url.pathname.endsWith("/cancel"))).toHaveLength(1);
  });

  it("cancel racing completion: the interaction finished first, so cancel says already-terminal and the job completes whole", async () => {
    const all = blocks(research);
    let release!: () => void;
    const finished = new Promise<void>((resolve) => {
      release = resolve;
    });
    let serverStatus = "in_progress";
    const { handlers } = geminiServer({
      create: () => sse(all.join(""), { gate: { after: 25, until: finished } }),
      cancel: () => {
        // The agent wrote its last words while the cancel was on its way.
        serverStatus = "completed";
        return errorResponse("error-cancel-not-running.json", 400);
      },
      get: () => json(serverStatus === "completed" ? stored : running(stored)),
    });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    const events: ResearchEvent[] = [];
    let outcome: unknown;
    for await (const event of job) {
      events.push(event);
      if (event.type === "text" && outcome === undefined) {
        outcome = await job.cancel();
        release();
      }
    }
    expect(outcome).toEqual({
      outcome: "already-terminal",
      finalStatus: "completed",
      detail: expect.stringContaining("already ended"),
    });
    const result = await job.result();
    expect(result.status).toBe("completed");
    expect(result.report).toBe(await baselineReport());
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("abort() tears down the transport only: no cancel is sent and the ref stays attachable", async () => {
    const { handlers, requests } = geminiServer({ create: () => sse(research) });
    server.use(...handlers);
    const job = client().research.start({ model, query: "q" });
    await expect(
      (async () => {
        for await (const event of job) if (event.type === "thinking") job.abort();
      })(),
    ).rejects.toSatisfy((e) => JobAbortedError.isInstance(e));
    expect(requests.map((r) => r.method)).toEqual(["POST"]);
    expect(job.toRef()).toMatchObject({ provider: "gemini", jobId });
  });

  it("get(ref) is one GET: status, the report, citations with UTF-16 offsets, and priced usage", async () => {
    const { handlers, requests } = geminiServer({ get: () => json(stored) });
    server.use(...handlers);
    const ref: JobRef = {
      v: 1,
      provider: "gemini",
      model,
      jobId,
      createdAt: "2026-07-01T10:00:00Z",
      resume: {},
    };
    const snapshot = await client().research.get(ref);
    expect(requests).toHaveLength(1);
    expect(snapshot.status).toBe("completed");
    expect(snapshot.report).toBe(await baselineReport());
    expect(snapshot.citations).toHaveLength(4);
    const span = snapshot.report!.slice(snapshot.citations![3]!.startIndex, snapshot.citations![3]!.endIndex);
    expect(span).toBe("Café owners won't notice — but carmakers will 🚗.");
    expect(snapshot.usage).toMatchObject({ searches: 78, costSource: "estimate" });
    // 150,300 of the input tokens were cached, priced at $0.20/M instead of $2/M.
    expect(snapshot.usage!.costUSD).toBeCloseTo(2.34018 - (150_300 * 1.8) / 1e6, 6);
  });

  it("get(ref) of a running interaction has a status and no report yet", async () => {
    server.use(...geminiServer({ get: () => json(running(stored)) }).handlers);
    const ref: JobRef = {
      v: 1,
      provider: "gemini",
      model,
      jobId,
      createdAt: "2026-07-01T10:00:00Z",
      resume: {},
    };
    const snapshot = await client().research.get(ref);
    expect(snapshot.status).toBe("running");
    expect(snapshot.report).toBeUndefined();
  });
});

describe("gemini: keys stay secret", () => {
  it("a 401 that echoes the key becomes an AuthenticationError without the key; refs never hold it", async () => {
    server.use(
      ...geminiServer({
        create: () =>
          json(
            { error: { code: 401, message: `API key ${KEY} not valid.`, status: "UNAUTHENTICATED" } },
            { status: 401 },
          ),
      }).handlers,
    );
    const logs: string[] = [];
    const sonde = client({
      logger: { debug: (m, d) => logs.push(m + JSON.stringify(d ?? {})), warn: (m) => logs.push(m) },
    });
    const job = sonde.research.start({ model, query: "q" });
    const events = await collect(job);
    const error = await job.result().catch((e) => e);
    expect(AuthenticationError.isInstance(error)).toBe(true);
    expect(error.message).not.toContain(KEY);
    expect(error.message).toMatch(/Check the gemini API key/);
    expect(JSON.stringify(events)).not.toContain(KEY);
    expect(JSON.stringify(error)).not.toContain(KEY);
    expect(logs.join("\n")).not.toContain(KEY);
  });
});

let cachedReport: string | undefined;
async function baselineReport(): Promise<string> {
  const steps = stored.steps as { type: string; content?: { text: string }[] }[];
  cachedReport ??= steps.find((s) => s.type === "model_output")!.content![0]!.text;
  return cachedReport;
}
