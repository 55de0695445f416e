/** Where jobs are stored by default, who can read them, and how tests move them. */
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { homedir, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileStore } from "../../providers/portable/index.js";
import { type JobRef, Sonde } from "../../src/index.js";

const posix = process.platform !== "win32";
const modeOf = async (path: string) => (await stat(path)).mode & 0o777;
const dirs: string[] = [];
const scratch = async () => {
  const dir = await mkdtemp(join(tmpdir(), "sonde-store-test-"));
  dirs.push(dir);
  return dir;
};
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true, maxRetries: 5 })));
});

const demo = { model: "portable:demo/offline", query: "How do deep research agents verify their citations?" };

describe("portable job stores", () => {
  it.runIf(posix)("creates owner-only directories (0o700) and files (0o600)", async () => {
    const root = join(await scratch(), "store");
    const store = createFileStore({ dir: root });
    await store.putJob({
      v: 1,
      jobId: "pj_permissions01",
      model: "portable:demo/offline",
      request: { model: "portable:demo/offline", query: "q" },
      requestKey: "k",
      createdAt: "2026-01-01T00:00:00.000Z",
      expiresAt: "2026-01-08T00:00:00.000Z",
      status: "queued",
    } as never);
    expect(await modeOf(root)).toBe(0o700);
    expect(await modeOf(join(root, "jobs"))).toBe(0o700);
    expect(await modeOf(join(root, "jobs", "pj_permissions01"))).toBe(0o700);
    expect(await modeOf(join(root, "jobs", "pj_permissions01", "job.json"))).toBe(0o600);
  });

  it("SONDE_STORE_DIR moves the default store, for the demo and every portable model", async () => {
    const dir = await scratch();
    const client = new Sonde({ env: { SONDE_STORE_DIR: dir } });
    const result = await client.research.start(demo).result();
    expect(await readdir(join(dir, "jobs"))).toEqual([result.jobId]);
    // Attaching with the same environment finds it.
    const ref: JobRef = {
      v: 1,
      provider: "portable",
      model: demo.model,
      jobId: result.jobId!,
      createdAt: new Date().toISOString(),
      resume: {},
    };
    expect((await new Sonde({ env: { SONDE_STORE_DIR: dir } }).research.get(ref)).status).toBe("completed");
  });

  it("portable.store wins over SONDE_STORE_DIR", async () => {
    const [fromEnv, given] = [await scratch(), await scratch()];
    const client = new Sonde({ env: { SONDE_STORE_DIR: fromEnv }, portable: { store: { dir: given } } });
    const { jobId } = await client.research.start(demo).result();
    expect(await readdir(join(given, "jobs"))).toEqual([jobId]);
    expect(await readdir(fromEnv)).toEqual([]);
  });

  it.runIf(posix)(
    "the demo's default store is per user and owner-only, in the temporary directory",
    async () => {
      const { jobId } = await new Sonde({ env: {} }).research.start(demo).result();
      const root = join(tmpdir(), `sonde-demo-${userInfo().uid}`);
      expect(await modeOf(join(root, "jobs", jobId!))).toBe(0o700);
      expect(await modeOf(join(root, "jobs", jobId!, "job.json"))).toBe(0o600);
    },
  );

  it("tests run with a scratch home, so a default store never reaches the user's", () => {
    expect(homedir()).toBe(join(tmpdir(), "sonde-test-home"));
  });
});
