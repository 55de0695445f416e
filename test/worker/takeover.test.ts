/**
 * A run whose BullMQ lock lapsed (a stalled event loop, a partition, a failover) while another
 * worker took its job over. Deleting the lock key is what a lapse looks like to BullMQ. Found
 * by probing: the stale run went on writing after the new run had ended the job (events after
 * `done`, a second `done`, its status over the final one), and a final `indeterminate` flipped
 * to `completed`. A job's end is now final: the scripts that write events and ends refuse a
 * job whose status is final, and the stale run stops, writing nothing more; an `indeterminate`
 * job only gains the ref of a stale run that got its submission's answer after all.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResearchQueue, createResearchWorker } from "../../src/worker/index.js";
import { completed, HOSTED, hostedClient, invoked, reply } from "../helpers/hosted-fake.js";
import { startLoopback } from "../helpers/loopback.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FINAL = ["completed", "incomplete", "cancelled", "failed", "indeterminate"];

/** Every status a job's state takes, in order (polled every 20 ms until `stop()`). */
function watchStatuses(key: string) {
  const db = redis.client();
  const statuses: string[] = [];
  let watching = true;
  const watched = (async () => {
    while (watching) {
      const status = await db.hget(key, "status");
      if (status && statuses.at(-1) !== status) statuses.push(status);
      await sleep(20);
    }
  })();
  return {
    statuses,
    async stop() {
      watching = false;
      await watched;
    },
  };
}

describe("a run whose lock lapsed while another worker took its job over", () => {
  it("writes nothing after the other run ended the job: one `done`, last, and its status kept", async () => {
    let released = false;
    // The stale worker's provider view: running until released. The new holder's: completed.
    const stale = await startLoopback((request, response) => {
      if (request.method === "POST") return reply(response, 200, invoked("job_1"));
      return reply(response, 200, released ? completed("job_1") : { job_id: "job_1", status: "running" });
    });
    const fresh = await startLoopback((_request, response) => reply(response, 200, completed("job_1")));
    const setup = { prefix: "tk1:", queueName: "tk1", lockDurationMs: 400, engineLimits: {}, concurrency: 1 };
    const queue = createResearchQueue({ redis: redis.client(), client: hostedClient(stale.url), ...setup });
    const first = createResearchWorker({ redis: redis.client(), client: hostedClient(stale.url), ...setup });
    let second: ReturnType<typeof createResearchWorker> | undefined;
    const db = redis.client();
    try {
      const { id } = await queue.enqueue({ model: HOSTED, query: "q" }, { idempotencyKey: "k" });
      await expect.poll(async () => (await queue.status(id))?.ref, { timeout: 5_000 }).toBeDefined();
      second = createResearchWorker({ redis: redis.client(), client: hostedClient(fresh.url), ...setup });
      await db.del(`bull:tk1:${id}:lock`);
      const settled = await queue.settled(id, { signal: AbortSignal.timeout(15_000) });
      expect(settled.state.status).toBe("completed");
      const atEnd = await queue.events.read(id);
      await sleep(1_000); // the stale run polls on: a `status` heartbeat per poll
      released = true; // then it sees the job end too, and would write its own end
      await sleep(2_000);
      const events = await queue.events.read(id);
      expect(events).toEqual(atEnd);
      expect(events.filter((event) => event.type === "done")).toHaveLength(1);
      expect(events.at(-1)?.type).toBe("done");
      expect((await queue.status(id))?.status).toBe("completed");
    } finally {
      await first.close();
      await second?.close();
      await queue.close();
      await stale.close();
      await fresh.close();
    }
  }, 40_000);

  it("a stale poll-only run's hold (no event to refuse) does not reopen the ended job", async () => {
    // The stale run waits out a long Retry-After between polls, then its hold timer fires: a
    // hold writes a status and queues a wake, and nothing of it went through the event fence.
    const stale = await startLoopback((request, response) => {
      if (request.method === "POST") return void reply(response, 200, invoked("job_1"));
      response.writeHead(200, { "content-type": "application/json", "retry-after": "4" });
      response.end(JSON.stringify({ job_id: "job_1", status: "running" }));
    });
    const fresh = await startLoopback((_request, response) => void reply(response, 200, completed("job_1")));
    const setup = { prefix: "tk3:", queueName: "tk3", lockDurationMs: 400, engineLimits: {}, concurrency: 1 };
    const queue = createResearchQueue({ redis: redis.client(), client: hostedClient(stale.url), ...setup });
    const first = createResearchWorker({
      redis: redis.client(),
      client: hostedClient(stale.url),
      ...setup,
      holdMs: 2_500,
    });
    let second: ReturnType<typeof createResearchWorker> | undefined;
    const db = redis.client();
    let watch: ReturnType<typeof watchStatuses> | undefined;
    try {
      const { id } = await queue.enqueue({ model: HOSTED, query: "q" }, { idempotencyKey: "k" });
      watch = watchStatuses(`tk3:job:{${id}}`);
      const { statuses } = watch;
      await expect.poll(async () => (await queue.status(id))?.ref, { timeout: 5_000 }).toBeDefined();
      second = createResearchWorker({
        redis: redis.client(),
        client: hostedClient(fresh.url),
        ...setup,
        holdMs: 60_000,
      });
      await db.del(`bull:tk3:${id}:lock`);
      const settled = await queue.settled(id, { signal: AbortSignal.timeout(15_000) });
      expect(settled.state.status).toBe("completed");
      await sleep(3_000); // the stale run's hold fires meanwhile
      await watch.stop();
      expect(statuses.slice(statuses.indexOf("completed"))).toEqual(["completed"]);
    } finally {
      await watch?.stop();
      await first.close();
      await second?.close();
      await queue.close();
      await stale.close();
      await fresh.close();
    }
  }, 40_000);

  it("lapsed while its submission awaited an answer: the job ends once, and stays as it ended", async () => {
    let posted!: () => void;
    const post = new Promise<void>((resolve) => {
      posted = resolve;
    });
    const api = await startLoopback(async (request, response) => {
      if (request.method === "POST") {
        posted();
        await sleep(2_000);
        return reply(response, 200, invoked("job_1"));
      }
      return reply(response, 200, completed("job_1"));
    });
    const setup = { prefix: "tk2:", queueName: "tk2" };
    const queue = createResearchQueue({ redis: redis.client(), client: hostedClient(api.url), ...setup });
    const workers = [0, 1].map(() =>
      createResearchWorker({
        redis: redis.client(),
        client: hostedClient(api.url),
        ...setup,
        lockDurationMs: 400,
        engineLimits: {},
      }),
    );
    const db = redis.client();
    let watch: ReturnType<typeof watchStatuses> | undefined;
    try {
      const { id } = await queue.enqueue({ model: HOSTED, query: "slow answer" }, { idempotencyKey: "k" });
      watch = watchStatuses(`tk2:job:{${id}}`);
      const { statuses } = watch;
      await post;
      await db.del(`bull:tk2:${id}:lock`);
      const settled = await queue.settled(id, { signal: AbortSignal.timeout(15_000) });
      const atEnd = await queue.events.read(id);
      await sleep(3_500); // the first run's submission answers, and its job completes
      await watch.stop();
      expect(settled.state.status).toBe("indeterminate");
      expect(statuses.filter((status) => FINAL.includes(status))).toEqual(["indeterminate"]);
      // The first run got the provider's answer after all: the job's state gains its ref, so
      // that attaching it follows the provider's job (nothing is submitted again).
      const state = await queue.status(id);
      expect(state?.status).toBe("indeterminate");
      expect(state?.ref).toMatchObject({ provider: "hosted", jobId: "job_1" });
      expect(await queue.events.read(id)).toEqual(atEnd);
      expect(api.requests.filter((request) => request.method === "POST")).toHaveLength(1);
    } finally {
      await watch?.stop();
      await Promise.all(workers.map((worker) => worker.close()));
      await queue.close();
      await api.close();
    }
  }, 40_000);
});
