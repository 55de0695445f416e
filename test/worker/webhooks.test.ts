import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sonde } from "../../src/index.js";
import {
  createResearchQueue,
  createResearchWorker,
  InvalidWebhookSignatureError,
  openAIWebhookHandler,
  verifyOpenAIWebhook,
} from "../../src/worker/index.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

// A Standard Webhooks secret: whsec_ + base64 key bytes.
const key = Buffer.from("sonde-test-webhook-signing-key-32b");
const SECRET = `whsec_${key.toString("base64")}`;

function signed(body: string, options: { id?: string; at?: number; key?: Buffer } = {}) {
  const id = options.id ?? "wh_685342d5c8f8819088b4b9a1e0f6e1e8";
  const at = String(options.at ?? Math.floor(Date.now() / 1000));
  const signature = createHmac("sha256", options.key ?? key)
    .update(`${id}.${at}.${body}`)
    .digest("base64");
  return { "webhook-id": id, "webhook-timestamp": at, "webhook-signature": `v1,${signature}` };
}

const completed = (responseId: string) =>
  JSON.stringify({
    id: "evt_685343a1381c819085d44c354e1b330e",
    object: "event",
    created_at: Math.floor(Date.now() / 1000),
    type: "response.completed",
    data: { id: responseId },
  });

describe("OpenAI webhooks (Standard Webhooks signatures)", () => {
  it("accepts a correctly signed event, also among rotated signatures, as Headers or a plain object", () => {
    const body = completed("resp_abc123");
    expect(verifyOpenAIWebhook(body, signed(body), SECRET).data.id).toBe("resp_abc123");
    const rotated = signed(body);
    const old = signed(body, { key: Buffer.from("an-older-key") })["webhook-signature"];
    rotated["webhook-signature"] = `${old} ${rotated["webhook-signature"]}`;
    expect(verifyOpenAIWebhook(body, new Headers(rotated), SECRET).type).toBe("response.completed");
  });

  it("refuses a tampered body, a wrong secret, missing headers and an old timestamp with a typed error", () => {
    const body = completed("resp_abc123");
    const headers = signed(body);
    const refused = (fn: () => unknown, text: string) => {
      try {
        fn();
        throw new Error("accepted");
      } catch (error) {
        expect(InvalidWebhookSignatureError.isInstance(error)).toBe(true);
        expect((error as Error).message).toContain(text);
      }
    };
    refused(() => verifyOpenAIWebhook(body.replace("abc", "abd"), headers, SECRET), "does not match");
    refused(
      () => verifyOpenAIWebhook(body, headers, `whsec_${Buffer.from("other").toString("base64")}`),
      "does not match",
    );
    refused(() => verifyOpenAIWebhook(body, { "webhook-id": "x" }, SECRET), "lacks");
    const stale = signed(body, { at: Math.floor(Date.now() / 1000) - 3_600 });
    refused(() => verifyOpenAIWebhook(body, stale, SECRET), "too far from now");
  });

  describe("the hook", () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(() => redis?.stop());

    it("wakes the job the response belongs to at once instead of at its next poll", async () => {
      const prefix = "wh:";
      const queue = createResearchQueue({
        redis: redis.client(),
        client: new Sonde({ env: {} }),
        prefix,
        queueName: "wh",
      });
      try {
        const id = "rj_webhooktest";
        const db = redis.client();
        await db.set(`${prefix}byjob:openai:resp_abc123`, id);
        await db.hset(`${prefix}job:{${id}}`, { status: "waiting", wakes: "3" });
        const wake = await queue.queue.add("wake", { id }, { jobId: `${id}-wake-3`, delay: 3_600_000 });
        expect(await wake.isDelayed()).toBe(true);
        const handle = openAIWebhookHandler(queue, SECRET);
        const body = completed("resp_abc123");
        expect(await handle(body, signed(body))).toBe(id);
        expect(await (await queue.queue.getJob(wake.id!))!.isDelayed()).toBe(false);
        // An event for a response no job knows is verified and ignored.
        const other = completed("resp_unknown");
        expect(await handle(other, signed(other))).toBeUndefined();
      } finally {
        await queue.close();
      }
    });

    /** An OpenAI poll-only job's fleet: the fake answers in_progress until `finish()`. */
    async function pollOnlyFleet(prefix: string, holdMs: number) {
      const poll = (name: string) =>
        JSON.parse(
          readFileSync(new URL(`../fixtures/openai/poll/pro.${name}.json`, import.meta.url), "utf8"),
        );
      let finished = false;
      const api = await startLoopback((request, response: ServerResponse) => {
        response.writeHead(200, { "content-type": "application/json" });
        const body = request.method === "POST" ? "queued" : finished ? "completed" : "in-progress";
        response.end(JSON.stringify(poll(body)));
      });
      const client = () =>
        new Sonde({
          env: {},
          openai: { apiKey: "sk-test-openai-0123456789abcdef", baseURL: `${api.url}/v1` },
          // In-process polls far apart: only the wake can bring the result in time.
          retry: { attempts: 1, minDelayMs: 60_000, maxDelayMs: 60_000 },
        });
      const queue = createResearchQueue({
        redis: redis.client(),
        client: client(),
        prefix,
        queueName: prefix.replace(":", ""),
      });
      const worker = createResearchWorker({
        redis: redis.client(),
        client: client(),
        prefix,
        queueName: prefix.replace(":", ""),
        holdMs,
        // Without the webhook, the next poll is ten minutes away.
        wakeBackoff: { minMs: 600_000, maxMs: 600_000 },
      });
      const until = async (check: () => Promise<boolean>) => {
        const end = Date.now() + 15_000;
        while (!(await check())) {
          if (Date.now() > end) throw new Error("condition not met in time");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      const enqueue = async () =>
        (
          await queue.enqueue(
            { model: "openai:gpt-5.5-pro", query: "Battery rules in 2025?" },
            { idempotencyKey: `${prefix}job` },
          )
        ).id;
      const close = async () => {
        await worker.close();
        await queue.close();
        await api.close();
      };
      const finish = () => {
        finished = true;
      };
      return { api, queue, until, enqueue, finish, close, body: completed(poll("completed").id) };
    }

    it("a poll-only OpenAI job in the worker: a signed response.completed wakes it at once and it completes; a bad signature is refused", async () => {
      const { api, queue, until, enqueue, finish, close, body } = await pollOnlyFleet("wh2:", 150);
      try {
        const id = await enqueue();
        // Waiting, with its next wake queued (the status is written just before the wake).
        await until(async () => (await queue.queue.getJob(`${id}-wake-1`)) !== undefined);
        expect((await queue.status(id))?.status).toBe("waiting");
        const wake = (await queue.queue.getJob(`${id}-wake-1`))!;
        expect(wake.opts.delay).toBe(600_000);
        finish();
        const handle = openAIWebhookHandler(queue, SECRET);
        // Signed with another secret: refused, and the job keeps waiting.
        const forged = signed(body, { key: Buffer.from("not-the-endpoint-secret") });
        await expect(handle(body, forged)).rejects.toSatisfy((e: unknown) =>
          InvalidWebhookSignatureError.isInstance(e),
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await queue.status(id))?.status).toBe("waiting");
        expect(await (await queue.queue.getJob(wake.id!))!.isDelayed()).toBe(true);
        const wokeAt = Date.now();
        expect(await handle(body, signed(body))).toBe(id);
        await until(async () => (await queue.status(id))?.status === "completed");
        expect(Date.now() - wokeAt).toBeLessThan(15_000);
        const result = (await queue.result(id))!;
        expect(result.report).toContain("# Battery rules");
        expect(api.requests.filter((r) => r.method === "POST")).toHaveLength(1);
      } finally {
        await close();
      }
    });

    it("a webhook that comes while the job is still running wakes it as soon as it gives its slot back", async () => {
      const { queue, until, enqueue, finish, close, body } = await pollOnlyFleet("wh3:", 800);
      try {
        const id = await enqueue();
        const handle = openAIWebhookHandler(queue, SECRET);
        // Running, its ref (and the response id the webhook names) stored, no wake queued yet.
        await until(async () => (await handle(body, signed(body))) === id);
        expect(await queue.queue.getJob(`${id}-wake-1`)).toBeUndefined();
        finish();
        // Without the remembered wake request its first wake would be ten minutes away.
        await until(async () => (await queue.status(id))?.status === "completed");
        expect((await queue.queue.getJob(`${id}-wake-1`))?.opts.delay).toBe(600_000);
      } finally {
        await close();
      }
    });
  });
});
