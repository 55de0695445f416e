/**
 * Which transport failures prove a request never left this machine. Only these make a
 * job-creating request safe to send again: the socket never connected (refused, no route,
 * no address), or TLS failed before the handshake finished, so not one byte of the
 * request was written. A reset, a timeout or a drop after connecting proves nothing.
 */
import { ConnectionError } from "../errors.js";
import type { ProviderName } from "../events.js";

/** System and undici codes raised before a request is written. */
const neverSentCodes = new Set([
  // The connection was never made.
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  // No address to connect to.
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EAI_FAIL",
  "EAI_NODATA",
  // The TLS handshake failed: the peer's certificate or protocol was refused. (Only
  // handshake codes: an OpenSSL error on an established connection proves nothing.)
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "ERR_TLS_HANDSHAKE_TIMEOUT",
  "ERR_SSL_WRONG_VERSION_NUMBER",
  "ERR_SSL_UNSUPPORTED_PROTOCOL",
  "ERR_SSL_NO_PROTOCOLS_AVAILABLE",
  "ERR_SSL_UNKNOWN_PROTOCOL",
  "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE",
  "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION",
  "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA",
  "ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE",
  "ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN",
  "ERR_SSL_TLSV1_UNRECOGNIZED_NAME",
]);

const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "EAI_NODATA"]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * The code of the failure that proves nothing was sent, found along the cause chain
 * (undici's `TypeError: fetch failed` wraps the socket's
 * error), or undefined when the request may have been received.
 */
export function neverSentCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = codeOf(current);
    if (code && neverSentCodes.has(code)) return code;
    // fetch refuses the spec's "bad ports" before connecting; undici gives no code, only this message.
    if ((current as Error).message === "bad port") return "BAD_PORT";
    // Node's aggregate of every address tried (IPv4 and IPv6): all of them must have refused.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const codes = errors.map(neverSentCode);
      if (codes.every((c) => c !== undefined)) return codes[0];
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A `ConnectionError` when `error` proves the request never left, else undefined. */
export function connectionFailure(error: unknown, provider: ProviderName): ConnectionError | undefined {
  const code = neverSentCode(error);
  if (code === undefined) return undefined;
  const blocked = code === "BAD_PORT";
  const what = blocked
    ? "fetch blocks this port"
    : dnsCodes.has(code)
      ? "could not resolve the host name"
      : /CERT|TLS|SSL/.test(code)
        ? "the TLS handshake failed"
        : "could not connect";
  const hint = blocked ? "Use another port." : "Check the base URL, DNS, proxy and certificates.";
  // A blocked port is blocked again: not worth a retry.
  return new ConnectionError(`${provider}: ${what} (${code}); the request was never sent. ${hint}`, {
    provider,
    networkCode: code,
    cause: error,
    retryable: !blocked,
  });
}
