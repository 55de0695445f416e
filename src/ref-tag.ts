/**
 * The ref credential tag (see ref-binding.ts), in its own module: ref-binding.ts loads it
 * when a keyed job starts, in parallel with the submission, so hashing is not in what loads
 * up front, and the tag is ready (synchronously) the moment the job id arrives.
 *
 * The key derivation (PBKDF2-SHA-256, 5,000 rounds) is the slow part: it runs in WebCrypto,
 * off the main thread on Node, Bun, Deno and Workers, once per (provider, key) per process.
 * The HMAC-SHA-256 over the job is synchronous (@noble/hashes), so binding a job id never
 * holds up its stream.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { RefOwnershipError } from "./errors.js";
import type { ProviderName } from "./events.js";
import type { JobRef } from "./ref.js";

const DOMAIN = "sonde.ref.credential.v1";
const ROUNDS = 5_000;
const utf8 = new TextEncoder();

interface Derived {
  bytes?: Uint8Array;
  ready: Promise<Uint8Array>;
}

/** Bounded for servers that see many tenants' keys; the oldest is dropped first. */
const derived = new Map<string, Derived>();
const MAX_DERIVED = 1_000;

async function derive(provider: ProviderName, apiKey: string): Promise<Uint8Array> {
  const { subtle } = globalThis.crypto;
  const password = await subtle.importKey("raw", utf8.encode(apiKey), "PBKDF2", false, ["deriveBits"]);
  const salt = utf8.encode(`${DOMAIN}/${provider}`);
  const params = { name: "PBKDF2", hash: "SHA-256", salt, iterations: ROUNDS };
  return new Uint8Array(await subtle.deriveBits(params, password, 256));
}

/** This key's derived key, starting its derivation if it is not known yet. */
export function derivedKey(provider: ProviderName, apiKey: string): Derived {
  const id = `${provider}\u0000${apiKey}`;
  let entry = derived.get(id);
  if (!entry) {
    const made: Derived = { ready: derive(provider, apiKey) };
    made.ready.then(
      (bytes) => (made.bytes = bytes),
      () => derived.delete(id), // not kept: the next ref tries again
    );
    if (derived.size >= MAX_DERIVED) derived.delete(derived.keys().next().value!);
    derived.set(id, made);
    entry = made;
  }
  return entry;
}

function tagOf(key: Uint8Array, provider: ProviderName, jobId: string, owner: string | undefined): string {
  const message = utf8.encode(JSON.stringify([DOMAIN, provider, jobId, owner ?? null]));
  let hex = "h1.";
  for (const byte of hmac(sha256, key, message).subarray(0, 12)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

/** The tag at once when this key is derived already; else undefined (and its derivation started). */
export function tagNow(provider: ProviderName, apiKey: string, jobId: string, owner: string | undefined) {
  const key = derivedKey(provider, apiKey).bytes;
  return key && tagOf(key, provider, jobId, owner);
}

/** The ref's credential tag for this key, job and owner. */
export async function credentialTag(
  provider: ProviderName,
  apiKey: string,
  jobId: string,
  owner: string | undefined,
): Promise<string> {
  return tagOf(await derivedKey(provider, apiKey).ready, provider, jobId, owner);
}

/** Rejects with `RefOwnershipError` unless the ref's tag is one of these keys' (see ref-binding.ts). */
export async function verifyTag(ref: JobRef, keys: readonly string[]): Promise<void> {
  const { provider, credential } = ref;
  const tags = await Promise.all(keys.map((key) => credentialTag(provider, key, ref.jobId, ref.owner)));
  if (credential !== undefined && tags.includes(credential)) return;
  throw new RefOwnershipError(
    "credential",
    `This ${provider} ref was created with another ${provider} credential than this client's (or was edited): ` +
      "refused before any request. Use the key that started the job; after a key rotation, list the old key in " +
      `{ ${provider}: { previousApiKeys: [...] } }.`,
    { provider },
  );
}
