/**
 * The ref tag's HMAC-SHA-256, synchronous, in its own module: ref-binding.ts loads it when a
 * job starts (in parallel with the submission), so it is not in what loads up front, and the
 * tag is ready the moment the job id arrives, without holding up the stream.
 */
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";

/** The first 96 bits of HMAC-SHA-256(key, message), hex. */
export function hmacTag(key: Uint8Array, message: Uint8Array): string {
  let hex = "";
  for (const byte of hmac(sha256, key, message).subarray(0, 12)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
