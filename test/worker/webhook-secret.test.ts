/**
 * The README's `openAIWebhookHandler(queue, process.env.OPENAI_WEBHOOK_SECRET!)` with the
 * variable unset or empty: a typed error saying which secret is missing, when the handler is
 * made, instead of a TypeError on every webhook (unset) or "signature does not match" (empty).
 */
import { describe, expect, it } from "vitest";
import { InvalidRequestError } from "../../src/index.js";
import { openAIWebhookHandler, type ResearchQueue, verifyOpenAIWebhook } from "../../src/worker/index.js";

const queue = {} as ResearchQueue;
const headers = {
  "webhook-id": "wh_1",
  "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
  "webhook-signature": "v1,AAAA",
};

describe("the webhook signing secret", () => {
  it.each([undefined, ""])("a missing secret (%j) is refused when the handler is made", (secret) => {
    expect(() => openAIWebhookHandler(queue, secret as unknown as string)).toThrow(InvalidRequestError);
    expect(() => openAIWebhookHandler(queue, secret as unknown as string)).toThrow(
      /signing secret \(whsec_…\).*OPENAI_WEBHOOK_SECRET/,
    );
  });

  it("verifyOpenAIWebhook without a secret throws the same typed error, not a TypeError", () => {
    expect(() => verifyOpenAIWebhook("{}", headers, undefined as unknown as string)).toThrow(
      InvalidRequestError,
    );
  });
});
