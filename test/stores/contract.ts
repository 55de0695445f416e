/**
 * What every JobStore must do, run against each implementation (memory, file, Redis):
 * idempotent appends by index, key claims, receipts, and leases whose fencing tokens
 * refuse a stale holder's late writes.
 */
import { describe, expect, it } from "vitest";
import type { JobRecord, JobStore, StoredEvent } from "../../providers/portable/index.js";

export const record = (jobId: string, extra: Partial<JobRecord> = {}): JobRecord => ({
  v: 1,
  jobId,
  model: "portable:demo/offline",
  request: { model: "portable:demo/offline", query: "q" },
  requestKey: "{}",
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 7 * 86_400_000).toISOString(),
  status: "queued",
  ...extra,
});

const event = (index: number, key = `k${index}`): StoredEvent => ({
  index,
  key,
  data: { type: "phase", phase: "plan", n: index },
  at: "2026-03-02T09:00:00.000Z",
});

let counter = 0;
const newId = () => `pj_contract${Date.now().toString(36)}${++counter}`;

export function storeContract(name: string, make: () => JobStore | Promise<JobStore>): void {
  describe(`${name} store contract`, () => {
    it("appends events once per index, in index order, and replaces receipts by key", async () => {
      const store = await make();
      const jobId = newId();
      await store.putJob(record(jobId));
      await store.appendEvent(jobId, event(0));
      await store.appendEvent(jobId, event(1));
      await store.appendEvent(jobId, event(1, "other"));
      await store.appendEvent(jobId, event(0, "other"));
      expect((await store.readEvents(jobId)).map((e) => [e.index, e.key])).toEqual([
        [0, "k0"],
        [1, "k1"],
      ]);
      await store.putReceipt(jobId, { key: "model:plan", kind: "model", status: "intent", at: "t" });
      await store.putReceipt(jobId, {
        key: "model:plan",
        kind: "model",
        status: "ok",
        result: { a: 1 },
        at: "t",
      });
      expect(await store.readReceipts(jobId)).toEqual([
        { key: "model:plan", kind: "model", status: "ok", result: { a: 1 }, at: "t" },
      ]);
      await store.deleteJob(jobId);
      expect(await store.getJob(jobId)).toBeUndefined();
      expect(await store.readEvents(jobId)).toEqual([]);
    });

    it("binds an idempotency key to the first job that claims it", async () => {
      const store = await make();
      const [x, y] = [newId(), newId()];
      const key = `key-${x}`;
      const owners = await Promise.all([store.claimKey(key, x), store.claimKey(key, y)]);
      // Claimed at once: one of the two wins, and both are told the same owner.
      expect(owners[0]).toBe(owners[1]);
      const a = owners[0]!;
      const b = a === x ? y : x;
      await store.releaseKey(key, b);
      expect(await store.claimKey(key, b)).toBe(a);
      await store.releaseKey(key, a);
      expect(await store.claimKey(key, b)).toBe(b);
    });

    it("grants a job's lease to one holder at a time; a lapsed lease goes to the next with a higher token", async () => {
      const store = await make();
      const jobId = newId();
      await store.putJob(record(jobId));
      const results = await Promise.all(
        ["a", "b", "c"].map((holder) => store.acquireLease!(jobId, holder, 300)),
      );
      const granted = results.filter((lease) => lease !== undefined);
      expect(granted).toHaveLength(1);
      const first = granted[0]!;
      expect(await store.acquireLease!(jobId, first.holder === "a" ? "b" : "a", 300)).toBeUndefined();
      expect(await store.renewLease!(jobId, first, 300)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 450));
      const next = await store.acquireLease!(jobId, "d", 10_000);
      expect(next).toMatchObject({ holder: "d" });
      expect(next!.token).toBeGreaterThan(first.token);
      // The stale holder, resumed after a pause past its lease: renewal fails, writes are refused.
      expect(await store.renewLease!(jobId, first, 300)).toBe(false);
      const stale = { token: first.token };
      await expect(store.appendEvent(jobId, event(0), stale)).rejects.toMatchObject({
        name: "LeaseLostError",
      });
      await expect(
        store.putReceipt(jobId, { key: "x", kind: "fetch", status: "ok", at: "t" }, stale),
      ).rejects.toMatchObject({ name: "LeaseLostError" });
      await expect(store.putJob(record(jobId, { status: "completed" }), stale)).rejects.toMatchObject({
        name: "LeaseLostError",
      });
      expect(await store.readEvents(jobId)).toEqual([]);
      expect(await store.readReceipts(jobId)).toEqual([]);
      expect((await store.getJob(jobId))?.status).toBe("queued");
      // The current holder writes; after it releases, the next holder gets a higher token at once.
      await store.appendEvent(jobId, event(0), { token: next!.token });
      expect(await store.readEvents(jobId)).toHaveLength(1);
      await store.releaseLease!(jobId, next!);
      const after = await store.acquireLease!(jobId, "e", 10_000);
      expect(after!.token).toBeGreaterThan(next!.token);
      await store.deleteJob(jobId);
    });
  });
}
