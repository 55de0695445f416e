/**
 * The Sonar engine is retired (providers/perplexity/WIRE.md §5): its id fails before any request
 * and names the Agent API preset that replaces it, old refs fail the same way, and the
 * 403 the retired API answers is a retirement, not a bad key. The catalog's new presets.
 */
import { describe, expect, it } from "vitest";
import { findModel, listModels } from "../../catalog/index.js";
import { type JobRef, ModelRetiredError, Sonde } from "../../src/index.js";
import { fastRetry, fixtureText } from "./helpers.js";

const KEY = "pplx-test-0123456789abcdef";
const RETIRED = "perplexity:sonar-deep-research";
const errors = JSON.parse(fixtureText("perplexity", "agent-errors.json")) as Record<
  string,
  { status: number; body: unknown }
>;

/** A client whose every request is recorded and answered as `answer` says. */
function recording(answer: () => Response = () => new Response("unexpected", { status: 599 }), clock?: Date) {
  const requests: string[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    requests.push(`${request.method} ${new URL(request.url).pathname}`);
    return answer();
  };
  const client = new Sonde({
    perplexity: { apiKey: KEY, baseURL: "https://perplexity.test" },
    fetch,
    retry: fastRetry,
    env: {},
    ...(clock && { clock: () => clock }),
  });
  return { client, requests };
}

const expectRetired = (error: unknown) => {
  expect(ModelRetiredError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ code: "model_retired", model: RETIRED, replacement: "perplexity:medium" });
  expect((error as Error).message).toContain("2026-09-27");
  expect((error as Error).message).toContain('Use "perplexity:medium" instead');
};

describe("perplexity:sonar-deep-research is retired", () => {
  it("start() throws ModelRetiredError naming perplexity:medium, before any request", () => {
    const { client, requests } = recording();
    let thrown: unknown;
    try {
      client.research.start({ model: RETIRED, query: "q" });
    } catch (error) {
      thrown = error;
    }
    expectRetired(thrown);
    expect(requests).toEqual([]);
  });

  it("fails the same way with a clock before the sunset: Sonde has no Sonar engine any more", () => {
    const { client, requests } = recording(undefined, new Date("2026-09-01T00:00:00Z"));
    expect(() => client.research.start({ model: RETIRED, query: "q" })).toThrow(ModelRetiredError);
    expect(requests).toEqual([]);
  });

  it("an old ref of a Sonar async job fails attach, get and cancel before any request", async () => {
    const { client, requests } = recording();
    const ref: JobRef = {
      v: 1,
      provider: "perplexity",
      model: RETIRED,
      jobId: "3f0c1d5e-8a44-4c1e-9d0b-2b6f0c4e9a11",
      createdAt: "2026-09-20T00:00:00.000Z",
      resume: { idempotencyKey: "job-7f1c2a" },
    };
    const calls: (() => Promise<unknown>)[] = [
      () => client.research.get(ref),
      () => client.research.cancel(ref),
      () => client.research.attach(ref).result(),
    ];
    for (const call of calls) {
      expectRetired(
        await Promise.resolve()
          .then(call)
          .catch((e: unknown) => e),
      );
    }
    expect(requests).toEqual([]);
  });

  it("an old Sonar ref fails as retired, not as a missing key, when no key is set", async () => {
    const client = new Sonde({ env: {}, retry: fastRetry });
    const ref: JobRef = {
      v: 1,
      provider: "perplexity",
      model: RETIRED,
      jobId: "3f0c1d5e-8a44-4c1e-9d0b-2b6f0c4e9a11",
      createdAt: "2026-09-20T00:00:00.000Z",
      resume: {},
    };
    expect(() => client.research.attach(ref)).toThrow(ModelRetiredError);
    expectRetired(await client.research.get(ref).catch((e: unknown) => e));
    expectRetired(await client.research.cancel(ref).catch((e: unknown) => e));
  });

  it("the retired API's 403 chat_completions_not_available is a ModelRetiredError, not a key problem; sent once", async () => {
    const fixture = errors.sonarRetired403!;
    const { client, requests } = recording(() => Response.json(fixture.body, { status: fixture.status }));
    const error = await client.research
      .start({ model: "perplexity:medium", query: "q" })
      .result()
      .catch((e: unknown) => e);
    expectRetired(error);
    expect(requests).toEqual(["POST /v1/agent"]);
  });
});

describe("the Agent API presets in the catalog", () => {
  it("medium (formerly deep-research) and high (formerly advanced-deep-research) run in the background with resume and cancel", () => {
    for (const [id, alias] of [
      ["perplexity:medium", "deep-research"],
      ["perplexity:high", "advanced-deep-research"],
    ] as const) {
      const info = findModel(id)!;
      expect(info.capabilities).toMatchObject({
        streaming: true,
        background: true,
        resume: true,
        cancel: true,
        pollOnly: false,
      });
      expect(info.aliases).toEqual([alias]);
      expect(findModel(`perplexity:${alias}`)).toMatchObject({ id, model: alias });
      // Token rates depend on the model the preset picks: unconfirmed, and said so.
      expect(info.pricing).toMatchObject({
        verified: false,
        perThousandSearches: 2.5,
        perThousandFetches: 0.5,
      });
      expect(info.pricing.notes).toMatch(/unconfirmed/);
    }
    expect(findModel(RETIRED)!.lifecycle).toEqual({
      stage: "retired",
      shutdownAt: "2026-09-27T00:00:00Z",
      replacement: "perplexity:medium",
    });
    expect(listModels({ provider: "perplexity", excludeRetired: true }).map((m) => m.id)).toEqual([
      "perplexity:medium",
      "perplexity:high",
    ]);
  });

  it("no idempotency key is offered: the engine does not accept one", () => {
    const { client } = recording();
    expect(() =>
      client.research.start({ model: "perplexity:medium", query: "q", idempotencyKey: "k" }),
    ).toThrow(/idempotencyKey/);
  });
});
