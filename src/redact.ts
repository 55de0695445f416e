/**
 * The one place secrets are scrubbed. Every configured API key is registered here
 * when a client is built, and every error message, log line and serialized error
 * passes through `redact` — so a key echoed back by a provider (or by a bug of ours)
 * never leaves the process in text we produce.
 */
const secrets = new Set<string>();

// Shapes of well-known keys, for keys we were never told about (e.g. in a provider's echo).
const keyShapes = [
  /\bsk-[A-Za-z0-9_-]{8,}/g, // OpenAI, OpenRouter (sk-or-…)
  /\bpplx-[A-Za-z0-9_-]{8,}/g, // Perplexity
  /\bAIza[A-Za-z0-9_-]{20,}/g, // Google
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
];

const REDACTED = "[redacted]";

/** Remembers a secret so that it is scrubbed from everything Sonde writes. Short values are ignored. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 6) secrets.add(value);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const shape of keyShapes)
    out = out.replace(shape, (_match, scheme) =>
      typeof scheme === "string" ? `${scheme} ${REDACTED}` : REDACTED,
    );
  return out;
}

/** Deep-redacts strings inside a JSON-like value (for raw provider payloads in logs and errors). */
export function redactValue<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map(redactValue) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = /^(authorization|api[-_]?key|x-api-key|x-goog-api-key)$/i.test(key)
        ? REDACTED
        : redactValue(inner);
    }
    return out as T;
  }
  return value;
}
