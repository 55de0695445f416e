/**
 * The seam `sonde/testing` plugs into: a process-wide hook (on globalThis, so two
 * copies of the package share it) that may claim a request or a ref before any
 * engine sees it. Core code never imports the testing entry.
 */
import type { CancelOutcome, EngineSession, JobSnapshot, ResolvedRequest } from "./provider.js";
import type { JobRef } from "./ref.js";

export interface MockHook {
  start(request: ResolvedRequest): EngineSession | undefined;
  /** Whether `start` would claim this request (no side effects), so `validate()` skips the key check. */
  claims?(request: ResolvedRequest): boolean;
  attach(ref: JobRef): EngineSession | undefined;
  get(ref: JobRef): Promise<JobSnapshot> | undefined;
  cancel(ref: JobRef): Promise<CancelOutcome> | undefined;
}

const KEY = Symbol.for("sonde.mockHook");

export function installMockHook(hook: MockHook | undefined): void {
  (globalThis as { [KEY]?: MockHook })[KEY] = hook;
}

export function mockHook(): MockHook | undefined {
  return (globalThis as { [KEY]?: MockHook })[KEY];
}
