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
import { RefOwnershipError } from "./errors.js";
import type { ProviderName } from "./events.js";
import { loadOnce } from "./load-once.js";
import type { JobRef } from "./ref.js";

type Tags = typeof import("./ref-tag.js");
let tags: Tags | undefined;

/** Hashing loads with the first keyed job (see ref-tag.ts). */
const loadTags = loadOnce(() => import("./ref-tag.js").then((module) => (tags = module)));

/** The ref's credential tag for this key, job and owner. */
export async function credentialTag(
  provider: ProviderName,
  apiKey: string,
  jobId: string,
  owner: string | undefined,
): Promise<string> {
  return (await loadTags()).credentialTag(provider, apiKey, jobId, owner);
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
export type RefBinding = Pick<JobRef, "credential" | "owner">;

/**
 * Starts deriving this identity's key and loading the HMAC, so that the tag is computed
 * synchronously when the job id arrives, without holding up the stream.
 */
export function prepareBinding(identity: RefIdentity): void {
  const { provider, apiKey } = identity;
  if (apiKey)
    loadTags().then(
      (module) => module.derivedKey(provider, apiKey).ready.catch(() => {}),
      () => {},
    );
}

/**
 * The binding fields `toRef()` writes for this job id: at once when `prepareBinding` is done
 * (the usual case: it ran while the submission was in flight), else a promise of them.
 */
export function bindRef(identity: RefIdentity, jobId: string): RefBinding | Promise<RefBinding> {
  const { provider, apiKey, owner } = identity;
  const ownerField = owner !== undefined ? { owner } : {};
  if (!apiKey) return ownerField;
  const credential = tags?.tagNow(provider, apiKey, jobId, owner);
  if (credential) return { credential, ...ownerField };
  return credentialTag(provider, apiKey, jobId, owner).then((tag) => ({ credential: tag, ...ownerField }));
}

/**
 * Throws `RefOwnershipError` for what is visible without hashing: another owner, an owner
 * without a tag, a tag where this client has no key. The tag itself is checked by
 * `verifyCredential`, which must settle before any request. Never sends anything.
 */
export function checkRefBinding(ref: JobRef, identity: RefIdentity): void {
  const { provider } = ref;
  if (ref.owner !== identity.owner) {
    const has = ref.owner === undefined ? "no owner" : "another owner";
    const wants = identity.owner === undefined ? "none" : "a different one";
    throw new RefOwnershipError(
      "owner",
      `This ${provider} ref belongs to ${has}, and this call's owner is ${wants}: refused before any request. ` +
        "Use it only for the owner that created it (the client's `owner` option or the call's `{ owner }`).",
      { provider },
    );
  }
  if (ref.credential === undefined) {
    // Refs from before credential binding attach as they always did. An owner is only
    // trusted where the engine has a key to tag it with; without the tag it may be edited.
    if (ref.owner !== undefined && identity.apiKey)
      throw new RefOwnershipError(
        "credential",
        `This ${provider} ref names an owner but has no credential tag to verify it: refused. ` +
          "Use the ref job.toRef() returned, unedited.",
        { provider },
      );
    return;
  }
  if (keysOf(identity).length === 0)
    throw new RefOwnershipError(
      "credential",
      `This ${provider} ref was created with a ${provider} key, and this client has none: refused before any request.`,
      { provider },
    );
}

function keysOf(identity: RefIdentity): string[] {
  return [identity.apiKey, ...identity.previousApiKeys].filter((key): key is string => Boolean(key));
}

/**
 * Rejects with `RefOwnershipError` unless the ref's tag is one of this client's keys' (the
 * current one or a `previousApiKeys` entry) for its job id and owner. Call after
 * `checkRefBinding`; resolves at once for an untagged ref. Never sends anything.
 */
export async function verifyCredential(ref: JobRef, identity: RefIdentity): Promise<void> {
  if (ref.credential !== undefined) await (await loadTags()).verifyTag(ref, keysOf(identity));
}
