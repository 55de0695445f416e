/**
 * Binds a ref to the credential that created it and to the application's `owner`, so
 * a stored ref is a handle, not an authority: attaching, reading or cancelling it
 * through a client with another key or owner is refused before any request.
 *
 * The tag is HMAC-SHA-256, keyed by a key derived from the API key, over
 * (domain, provider, jobId, owner), truncated to 96 bits. So it:
 * - never reveals the key (a one-way function of it), and links no two refs of one key;
 * - covers `jobId` and `owner`: editing either breaks the tag without the key;
 * - resists guessing: the key derivation is PBKDF2 (5,000 rounds), so testing candidate
 *   keys against a leaked ref costs 5,000 HMACs per guess. Provider keys are long random
 *   tokens and out of reach; a short, human-chosen key (a self-hosted endpoint's) could
 *   still be found by a dictionary, as from any hash of it: give such endpoints random keys.
 * 96 bits make an accidental match of two different keys negligible.
 * Engines without a key (the portable engine, a mock without one) write no tag; their
 * `owner` is checked as written, so keep such refs where your users cannot edit them.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { pbkdf2 } from "@noble/hashes/pbkdf2.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { RefOwnershipError } from "./errors.js";
import type { ProviderName } from "./events.js";
import type { JobRef } from "./ref.js";

const DOMAIN = "sonde.ref.credential.v1";
const ROUNDS = 5_000;

/**
 * Derived keys, once per (provider, key) per process: the derivation is the slow part
 * (tens of milliseconds, synchronous, on the first ref of a key). Bounded for servers
 * that see many tenants' keys; the oldest is dropped first.
 */
const derived = new Map<string, Uint8Array>();
const MAX_DERIVED = 1_000;

function derivedKey(provider: ProviderName, apiKey: string): Uint8Array {
  const id = `${provider}\u0000${apiKey}`;
  let key = derived.get(id);
  if (!key) {
    key = pbkdf2(sha256, apiKey, `${DOMAIN}/${provider}`, { c: ROUNDS, dkLen: 32 });
    if (derived.size >= MAX_DERIVED) derived.delete(derived.keys().next().value!);
    derived.set(id, key);
  }
  return key;
}

/** The ref's credential tag for this key, job and owner. */
export function credentialTag(
  provider: ProviderName,
  apiKey: string,
  jobId: string,
  owner: string | undefined,
): string {
  const message = utf8ToBytes(JSON.stringify([DOMAIN, provider, jobId, owner ?? null]));
  return `h1.${bytesToHex(hmac(sha256, derivedKey(provider, apiKey), message).subarray(0, 12))}`;
}

/** What a client knows about itself, for binding and checking refs of one engine. */
export interface RefIdentity {
  provider: ProviderName;
  /** The engine's current key; undefined for keyless engines. */
  apiKey: string | undefined;
  /** Keys whose refs are still accepted after a rotation (`previousApiKeys`). */
  previousApiKeys: readonly string[];
  /** The application's owner for this call (per-call option, else the client's). */
  owner: string | undefined;
}

/** The binding fields `toRef()` writes. */
export function bindRef(identity: RefIdentity, jobId: string): Pick<JobRef, "credential" | "owner"> {
  return {
    ...(identity.apiKey && {
      credential: credentialTag(identity.provider, identity.apiKey, jobId, identity.owner),
    }),
    ...(identity.owner !== undefined && { owner: identity.owner }),
  };
}

/** Throws `RefOwnershipError` unless this client may use the ref. Never sends anything. */
export function checkRefBinding(ref: JobRef, identity: RefIdentity): void {
  const { provider } = ref;
  if (ref.owner !== identity.owner) {
    const has = ref.owner === undefined ? "no owner" : "another owner";
    const wants = identity.owner === undefined ? "none" : "a different one";
    throw new RefOwnershipError(
      "owner",
      `This ${provider} ref belongs to ${has}, and this call's owner is ${wants}: refused before any request. ` +
        "Use the ref only for the owner that created it (the client's `owner` option, or `{ owner }` on the call).",
      { provider },
    );
  }
  const keys = [identity.apiKey, ...identity.previousApiKeys].filter((key): key is string => Boolean(key));
  if (ref.credential === undefined) {
    // Refs from before credential binding attach as they always did. An owner is only
    // trusted where the engine has a key to tag it with; without the tag it may be edited.
    if (ref.owner !== undefined && identity.apiKey)
      throw new RefOwnershipError(
        "credential",
        `This ${provider} ref names an owner but carries no credential tag, so the owner cannot be verified: refused. ` +
          "Use the ref job.toRef() returned, unedited.",
        { provider },
      );
    return;
  }
  if (keys.some((key) => credentialTag(provider, key, ref.jobId, ref.owner) === ref.credential)) return;
  throw new RefOwnershipError(
    "credential",
    keys.length === 0
      ? `This ${provider} ref was created with a ${provider} key, and this client has none: refused before any request.`
      : `This ${provider} ref was created with another ${provider} credential than this client's (or was edited): ` +
          "refused before any request. Use the key that started the job; after a key rotation, list the old key in " +
          `{ ${provider}: { previousApiKeys: [...] } }.`,
    { provider },
  );
}
