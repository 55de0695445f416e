/**
 * `--record <file>`: every event appended to `<file>` (JSON lines) and the job's ref kept in
 * `<file>.ref.json`, rewritten atomically after each event, so the ref always points just
 * after the last recorded event and `sonde attach <file>.ref.json` continues from there.
 */
import { appendFileSync, renameSync, writeFileSync } from "node:fs";
import type { ResearchEvent } from "../events.js";
import type { ResearchJob } from "../job.js";

export class Recorder {
  readonly #events: string;
  readonly #ref: string;

  constructor(path: string) {
    this.#events = path;
    this.#ref = `${path}.ref.json`;
    writeFileSync(path, "");
  }

  /** Records one delivered event, then moves the ref past it. */
  add(event: ResearchEvent, job: ResearchJob): void {
    appendFileSync(this.#events, `${JSON.stringify(event)}\n`);
    if (job.id === undefined) return;
    // Write-then-rename: a crash leaves the previous ref or the new one, never half of one.
    const temp = `${this.#ref}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(job.toRef(), null, 2)}\n`);
    renameSync(temp, this.#ref);
  }
}
