/**
 * Types that guide (checked by `tsc` over the tests; each @ts-expect-error must stay an
 * error), plus the run-time side of the same rules.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { modelIds } from "../../catalog/ids.js";
import { knownModelIds, models } from "../../catalog/index.js";
import * as main from "../../src/index.js";
import {
  InvalidRequestError,
  type JobRef,
  type ModelId,
  type ResearchRequest,
  type ResearchResult,
  Sonde,
  SondeError,
  type SondeErrorCode,
  sondeErrorCodes,
} from "../../src/index.js";
import type { EngineSession, ResearchAdapter, WireEvent } from "../../src/provider-entry.js";

describe("model ids", () => {
  it("complete from the catalog and still accept any string", () => {
    expectTypeOf<"openai:gpt-5.5-pro">().toExtend<ModelId>();
    expectTypeOf<"gemini:deep-research-preview-04-2026">().toExtend<ResearchRequest["model"]>();
    expectTypeOf<"portable:local/qwen3:32b">().toExtend<ModelId>();
    expectTypeOf<string>().toExtend<ModelId>();
    // The known ids are a literal union, which is what an editor offers.
    expectTypeOf<(typeof modelIds)[number]>().not.toEqualTypeOf<string>();
  });

  it("catalog/ids.ts lists the catalog's current ids (run `npm run catalog:ids` after adding one)", () => {
    expect([...modelIds]).toEqual(knownModelIds());
    expect(knownModelIds().every((id) => models.some((m) => m.id === id))).toBe(true);
  });
});

describe("client options", () => {
  it("reject unknown keys at compile time", () => {
    const key = "sk-test-types-0000";
    // @ts-expect-error apiKey is camel-cased
    expect(() => new Sonde({ gemini: { apikey: key }, env: {} })).toThrow(InvalidRequestError);
    // @ts-expect-error organization is spelt with a z
    expect(() => new Sonde({ openai: { apiKey: key, organisation: "org-1" }, env: {} })).toThrow(
      'Unknown client option "openai.organisation". Did you mean "openai.organization"?',
    );
    // @ts-expect-error a top-level typo
    expect(() => new Sonde({ idleTimeout: 5, env: {} })).toThrow(/Did you mean "idleTimeoutMs"/);
    // @ts-expect-error a retry typo
    expect(() => new Sonde({ retry: { attempt: 2 }, env: {} })).toThrow(/Did you mean "retry.attempts"/);
  });

  it("reject unknown keys at run time with the nearest valid key", () => {
    const untyped = JSON.parse('{ "gemini": { "apikey": "sk-test-types-0000" } }');
    expect(() => new Sonde(untyped)).toThrow(
      'Unknown client option "gemini.apikey". Did you mean "gemini.apiKey"?',
    );
    expect(() => new Sonde(untyped)).not.toThrow(/sk-test-types/);
    // Open sections stay open: a logger may be any console-like object.
    expect(() => new Sonde({ logger: console, env: {} })).not.toThrow();
  });
});

describe("attach, get and cancel", () => {
  it("take a JobRef or its JSON text", () => {
    type AttachArg = Parameters<Sonde["research"]["attach"]>[0];
    expectTypeOf<JobRef>().toExtend<AttachArg>();
    expectTypeOf<string>().toExtend<AttachArg>();
    expectTypeOf<{ jobId: string }>().not.toExtend<AttachArg>();
    expectTypeOf<Parameters<Sonde["research"]["cancel"]>[0]>().toEqualTypeOf<AttachArg>();
  });
});

describe("entries", () => {
  it("the main entry leaves the adapter spec to sonde/provider", () => {
    for (const name of ["specVersion"]) expect(name in main).toBe(false);
    expectTypeOf<EngineSession>().toHaveProperty("connect");
    expectTypeOf<ResearchAdapter>().toHaveProperty("start");
    expectTypeOf<WireEvent>().toHaveProperty("cursor");
    // @ts-expect-error not exported from the main entry any more
    type _Gone = main.EngineSession;
  });
});

describe("error codes", () => {
  /** What a user writes: one branch per code, and `never` proves none is missing. */
  function advice(error: SondeError): string {
    const code = error.code;
    switch (code) {
      case "invalid_request":
      case "unknown_model":
      case "model_retired":
      case "model_unavailable":
      case "unsupported_option":
      case "unsupported_adapter":
      case "invalid_ref":
      case "ref_ownership":
      case "idempotency_conflict":
      case "missing_dependency":
      case "invalid_webhook_signature":
        return "fix the call";
      case "authentication":
      case "insufficient_credit":
        return "fix the account";
      case "rate_limit":
      case "provider_unavailable":
      case "connection_failed":
      case "stream_interrupted":
        return "retry later";
      case "job_failed":
      case "job_not_found":
      case "indeterminate_submission":
      case "store_error":
      case "lease_lost":
      case "halted":
        return "look at the job";
      case "aborted":
      case "timeout":
      case "stream_consumed":
      case "job_not_created":
        return "local";
      default: {
        const unhandled: never = code;
        return unhandled;
      }
    }
  }

  it("a switch over SondeErrorCode is exhaustive, and the list and the type agree", () => {
    expectTypeOf<SondeError["code"]>().toEqualTypeOf<SondeErrorCode>();
    expectTypeOf<(typeof sondeErrorCodes)[number]>().toEqualTypeOf<SondeErrorCode>();
    // A provider's code is not a SondeErrorCode: it lives in providerCode.
    expectTypeOf<"insufficient_quota">().not.toExtend<SondeErrorCode>();
    expectTypeOf<SondeError["providerCode"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<SondeError["partial"]>().toEqualTypeOf<ResearchResult | undefined>();
    for (const code of sondeErrorCodes) expect(advice(new SondeError(code, "m"))).toBeTypeOf("string");
    // @ts-expect-error a code outside the closed set does not compile
    new SondeError("insufficient_quota", "m");
  });
});
