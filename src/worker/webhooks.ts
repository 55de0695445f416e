/**
 * Completion without polling: OpenAI notifies a webhook when a background response ends
 * (`response.completed`, `.failed`, `.cancelled`, `.incomplete`), signed as the Standard
 * Webhooks spec says (`webhook-id`, `webhook-timestamp`, `webhook-signature` headers;
 * HMAC-SHA256 of `id.timestamp.body` under the endpoint's `whsec_` secret). A verified
 * event wakes the waiting job at once instead of at its next scheduled poll. Gemini,
 * OpenRouter, Perplexity and the hosted job API document no webhooks: those jobs poll.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { InvalidRequestError, SondeError } from "../errors.js";
import type { ResearchQueue } from "./queue.js";

/** A webhook whose signature, or timestamp, does not check out: answer 400 and drop it. */
export class InvalidWebhookSignatureError extends SondeError {
  static override readonly errorName: string = "InvalidWebhookSignatureError";
  constructor(message: string) {
    super("invalid_webhook_signature", message, { retryable: false });
  }
}

export interface OpenAIWebhookEvent {
  id: string;
  type: string;
  created_at: number;
  data: { id: string };
}

/** Request headers as a `Headers` object (fetch) or a plain record (Node's `IncomingMessage.headers`). */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | string[] | undefined>;

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof (headers as { get?: unknown }).get === "function")
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Verifies a webhook's signature over the raw body (as received, before any JSON parsing)
 * and returns the event; throws `InvalidWebhookSignatureError` otherwise. Timestamps more
 * than `toleranceSec` away from now are refused (replays).
 * @example
 * ```ts
 * import { verifyOpenAIWebhook } from "sonde/worker";
 *
 * const event = verifyOpenAIWebhook(rawBody, request.headers, process.env.OPENAI_WEBHOOK_SECRET!);
 * event.type; // "response.completed", …
 * ```
 */
export function verifyOpenAIWebhook(
  body: string,
  headers: WebhookHeaders,
  secret: string,
  options: { toleranceSec?: number; now?: () => Date } = {},
): OpenAIWebhookEvent {
  requireSecret(secret);
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures)
    throw new InvalidWebhookSignatureError(
      "The webhook lacks webhook-id, webhook-timestamp or webhook-signature headers.",
    );
  const seconds = Number(timestamp);
  const now = (options.now?.() ?? new Date()).getTime() / 1000;
  if (!Number.isFinite(seconds) || Math.abs(now - seconds) > (options.toleranceSec ?? 300))
    throw new InvalidWebhookSignatureError(
      "The webhook's timestamp is too far from now (a replay, or a skewed clock).",
    );
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  // The header lists space-separated `v1,<base64>` signatures (several during key rotation).
  const valid = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",");
    if (version !== "v1" || !signature) return false;
    const given = Buffer.from(signature, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!valid)
    throw new InvalidWebhookSignatureError(
      "The webhook's signature does not match: check the endpoint's signing secret (whsec_…).",
    );
  return JSON.parse(body) as OpenAIWebhookEvent;
}

/** A configuration mistake (an unset environment variable), not a bad webhook: say so. */
function requireSecret(secret: unknown): void {
  if (typeof secret !== "string" || secret.length === 0)
    throw new InvalidRequestError(
      "No webhook signing secret (whsec_…): pass the endpoint's secret from OpenAI's webhook settings " +
        "(is OPENAI_WEBHOOK_SECRET set?).",
    );
}

const ENDINGS = new Set([
  "response.completed",
  "response.failed",
  "response.cancelled",
  "response.incomplete",
]);

/**
 * A webhook handler for OpenAI background responses: verifies the event and wakes the job
 * the response belongs to. Returns the research job id it woke, if any.
 * @example
 * ```ts
 * import { openAIWebhookHandler } from "sonde/worker";
 *
 * const wake = openAIWebhookHandler(queue, process.env.OPENAI_WEBHOOK_SECRET!);
 * // In the webhook route, with the raw body as received:
 * const woken = await wake(await request.text(), request.headers);
 * ```
 */
export function openAIWebhookHandler(queue: ResearchQueue, secret: string) {
  requireSecret(secret);
  return async (body: string, headers: WebhookHeaders): Promise<string | undefined> => {
    const event = verifyOpenAIWebhook(body, headers, secret);
    if (!ENDINGS.has(event.type) || typeof event.data?.id !== "string") return undefined;
    const id = await queue.byProviderJob("openai", event.data.id);
    if (id) await queue.wake(id);
    return id;
  };
}
