/**
 * A ref is a handle, not an authority: it carries a tag of the credential that created it
 * (never the key) and the application's owner, and a client with another key or owner is
 * refused before any request.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ProviderName } from "../../src/events.js";
import {
  InvalidRequestError,
  type JobRef,
  RefOwnershipError,
  type ResearchJob,
  Sonde,
} from "../../src/index.js";
import { credentialTag } from "../../src/ref-binding.js";
import { clearMocks, mockResearch } from "../../src/testing/index.js";

afterEach(() => clearMocks());

const KEY_A = "sk-test-tenant-a-0123456789abcdef";
const KEY_B = "sk-test-tenant-b-fedcba9876543210";
const request = { model: "openai:gpt-5.5-pro", query: "sodium-ion density" };

function client(options: { apiKey?: string; previousApiKeys?: string[]; owner?: string } = {}) {
  const requests: unknown[] = [];
  const sonde = new Sonde({
    openai: { ...(options.apiKey && { apiKey: options.apiKey }), previousApiKeys: options.previousApiKeys },
    ...(options.owner !== undefined && { owner: options.owner }),
    fetch: async (...args) => {
      requests.push(args);
      throw new Error("no request may be sent");
    },
    env: {},
  });
  return { sonde, requests };
}

/** A mock job's ref, taken after `created` (JSON round-tripped, as an app would store it). */
async function refOf(job: ResearchJob): Promise<JobRef> {
  for await (const event of job) if (event.type === "created") break;
  return JSON.parse(JSON.stringify(job.toRef()));
}

async function expectRefused(sonde: Sonde, input: unknown, field: "credential" | "owner", owner?: string) {
  const ref = input as JobRef; // possibly tampered with: the run-time checks are under test
  const options = owner === undefined ? {} : { owner };
  let thrown: unknown;
  let job: ResearchJob | undefined;
  try {
    job = sonde.research.attach(ref, options);
  } catch (error) {
    thrown = error;
  }
  if (job) {
    // A tag that does not match is found by hashing, which is async: the job refuses when it
    // first runs, before its first request, and delivers no event.
    expect(field).toBe("credential");
    thrown = await job.result().catch((error: unknown) => error);
    const events: unknown[] = [];
    const iterated = (async () => {
      for await (const event of sonde.research.attach(ref, options)) events.push(event);
    })();
    await expect(iterated).rejects.toSatisfy((e) => RefOwnershipError.isInstance(e) && e.field === field);
    expect(events).toEqual([]);
  }
  expect(RefOwnershipError.isInstance(thrown), `attach: ${String(thrown)}`).toBe(true);
  expect((thrown as RefOwnershipError).field).toBe(field);
  const isRefusal = (e: unknown) => RefOwnershipError.isInstance(e) && e.field === field;
  await expect(sonde.research.get(ref, options)).rejects.toSatisfy(isRefusal);
  await expect(sonde.research.cancel(ref, options)).rejects.toSatisfy(isRefusal);
  return thrown as RefOwnershipError;
}

describe("ref credential binding", () => {
  it("records a short tag of the key, never the key, and attaches with the same key", async () => {
    mockResearch("# Report").always().register();
    const ref = await refOf(client({ apiKey: KEY_A }).sonde.research.start(request));
    expect(ref.credential).toMatch(/^h1\.[0-9a-f]{24}$/);
    expect(JSON.stringify(ref)).not.toContain("tenant-a");
    expect(JSON.parse(JSON.stringify(ref))).toEqual(ref);
    // Another job with the same key gets another tag: refs of one key are not linkable.
    const other = await refOf(client({ apiKey: KEY_A }).sonde.research.start(request));
    expect(other.credential).not.toBe(ref.credential);
    const result = await client({ apiKey: KEY_A }).sonde.research.attach(ref).result();
    expect(result.report).toBe("# Report");
  });

  it("refuses attach, get and cancel through another key, before any request", async () => {
    mockResearch("# Report").always().register();
    const ref = await refOf(client({ apiKey: KEY_A }).sonde.research.start(request));
    clearMocks(); // a real engine would be asked now, if the check let it through
    const { sonde, requests } = client({ apiKey: KEY_B });
    const error = await expectRefused(sonde, ref, "credential");
    expect(error.message).toMatch(/another openai credential.*previousApiKeys/);
    expect(error.message).not.toContain(KEY_B);
    expect(requests).toEqual([]);
    // A client with no openai key at all is refused the same way.
    await expectRefused(client().sonde, ref, "credential");
  });

  it("accepts a rotated key only when it is listed in previousApiKeys, and re-tags new refs", async () => {
    mockResearch("# Report", { delayMs: 5 }).always().register();
    const ref = await refOf(client({ apiKey: KEY_A }).sonde.research.start(request));
    const rotated = client({ apiKey: KEY_B, previousApiKeys: [KEY_A] }).sonde;
    const job = rotated.research.attach(ref);
    const next = await refOf(job);
    expect(next.credential).not.toBe(ref.credential);
    await expectRefused(client({ apiKey: KEY_A }).sonde, next, "credential");
    expect(client({ apiKey: KEY_B }).sonde.research.attach(next)).toBeTruthy();
    job.abort();
  });

  it("computes the same tags as before the key derivation moved to WebCrypto (stored refs still verify)", async () => {
    // Computed by the previous, all-@noble/hashes implementation (PBKDF2-SHA-256, 5,000 rounds, then HMAC-SHA-256).
    const vectors: [ProviderName, string, string, string | undefined, string][] = [
      ["openai", KEY_A, "resp_68a1f0c2b3e4d5", undefined, "h1.2ad4769e03c1ae91f519be6b"],
      ["openai", KEY_A, "resp_68a1f0c2b3e4d5", "tenant-a", "h1.3a9a3c5f89df213fdcffba5a"],
      [
        "gemini",
        "AIzaSy-test-ünïcødé-key",
        "interactions/v1_abc",
        "user é 42",
        "h1.e21560a0a3d0c35c2e638c79",
      ],
      ["hosted", "k", "job_1", undefined, "h1.337fa7d6bab204a4f1bd4bea"],
    ];
    for (const [provider, key, jobId, owner, tag] of vectors)
      expect(await credentialTag(provider, key, jobId, owner)).toBe(tag);
    // A ref stored with such a tag passes the check: its first request goes out (and is refused here).
    const stored: JobRef = {
      v: 1,
      provider: "openai",
      model: "openai:gpt-5.5-pro",
      jobId: "resp_68a1f0c2b3e4d5",
      createdAt: "2026-05-01T00:00:00.000Z",
      credential: "h1.3a9a3c5f89df213fdcffba5a",
      owner: "tenant-a",
      resume: {},
    };
    const requests: unknown[] = [];
    const sonde = new Sonde({
      openai: { apiKey: KEY_A },
      owner: "tenant-a",
      fetch: async (...args) => {
        requests.push(args);
        return new Response(JSON.stringify({ error: { message: "no" } }), { status: 401 });
      },
      env: {},
    });
    const job = sonde.research.attach(stored);
    expect(job.toRef().credential).toBe(stored.credential);
    await expect(job.result()).rejects.toSatisfy((e) => !RefOwnershipError.isInstance(e));
    expect(requests.length).toBeGreaterThan(0);
    expect(job.toRef().credential).toBe(stored.credential);
    const edited = { ...stored, credential: "h1.3a9a3c5f89df213fdcffba5b" };
    const other = client({ apiKey: KEY_A, owner: "tenant-a" });
    await expectRefused(other.sonde, edited, "credential");
    expect(other.requests).toEqual([]);
  });

  it("rejects previousApiKeys that are not a list of keys", () => {
    const given = { apiKey: KEY_B, previousApiKeys: KEY_A as unknown as string[] };
    expect(() => new Sonde({ openai: given, env: {} })).toThrow(/openai\.previousApiKeys must be an array/);
  });

  it("refuses a ref whose job id was edited", async () => {
    mockResearch("# Report").always().register();
    const ref = await refOf(client({ apiKey: KEY_A }).sonde.research.start(request));
    await expectRefused(
      client({ apiKey: KEY_A }).sonde,
      { ...ref, jobId: "resp_someone_elses" },
      "credential",
    );
  });

  it("attaches refs without a tag (older Sonde, keyless mocks) as before", async () => {
    mockResearch("# Report").always().register();
    const keyless = await refOf(client().sonde.research.start(request));
    expect(keyless.credential).toBeUndefined();
    const { credential: _, ...older } = await refOf(client({ apiKey: KEY_A }).sonde.research.start(request));
    expect((await client({ apiKey: KEY_B }).sonde.research.attach(older).result()).report).toBe("# Report");
    expect((await client({ apiKey: KEY_B }).sonde.research.attach(keyless).result()).report).toBe("# Report");
  });
});

describe("ref owner", () => {
  it("writes the client's owner into refs and refuses another owner or none, before any request", async () => {
    mockResearch("# Report").always().register();
    const ref = await refOf(client({ apiKey: KEY_A, owner: "tenant-a" }).sonde.research.start(request));
    expect(ref.owner).toBe("tenant-a");
    const b = client({ apiKey: KEY_A, owner: "tenant-b" });
    const error = await expectRefused(b.sonde, ref, "owner");
    expect(error.message).toMatch(/another owner/);
    expect(b.requests).toEqual([]);
    await expectRefused(client({ apiKey: KEY_A }).sonde, ref, "owner");
    expect((await client({ apiKey: KEY_A, owner: "tenant-a" }).sonde.research.get(ref)).status).toBeTruthy();
  });

  it("takes a per-call owner over the client's, and a job's own cancel keeps it", async () => {
    mockResearch("# Report", { delayMs: 20 }).always().register();
    const shared = client({ apiKey: KEY_A }).sonde; // one client serving many tenants
    const job = shared.research.start(request, { owner: "user-42" });
    const ref = await refOf(job);
    expect(ref.owner).toBe("user-42");
    await expectRefused(shared, ref, "owner");
    await expectRefused(shared, ref, "owner", "user-7");
    expect((await shared.research.get(ref, { owner: "user-42" })).jobId).toBe(ref.jobId);
    expect((await job.cancel()).outcome).toBe("cancelled");
  });

  it("refuses an edited owner: the tag covers it", async () => {
    mockResearch("# Report").always().register();
    const ref = await refOf(client({ apiKey: KEY_A, owner: "tenant-a" }).sonde.research.start(request));
    await expectRefused(
      client({ apiKey: KEY_A, owner: "tenant-b" }).sonde,
      { ...ref, owner: "tenant-b" },
      "credential",
    );
    const { credential: _, ...untagged } = ref;
    await expectRefused(client({ apiKey: KEY_A, owner: "tenant-a" }).sonde, untagged, "credential");
  });

  it("checks the owner of keyless engines as written", async () => {
    mockResearch("# Report").always().register();
    const portable = new Sonde({ owner: "tenant-a", env: {} });
    const job = portable.research.start({ model: "portable:demo/offline", query: "q" });
    const ref = await refOf(job);
    expect(ref).toMatchObject({ provider: "portable", owner: "tenant-a" });
    expect(ref.credential).toBeUndefined();
    await expectRefused(new Sonde({ owner: "tenant-b", env: {} }), ref, "owner");
    expect((await portable.research.attach(ref).result()).report).toBe("# Report");
  });

  it("rejects an owner that cannot go into a ref", () => {
    expect(() => new Sonde({ owner: "", env: {} })).toThrow(InvalidRequestError);
    const sonde = new Sonde({ env: {} });
    expect(() => sonde.research.start(request, { owner: "x".repeat(300) })).toThrow(InvalidRequestError);
  });
});
