/**
 * Response statuses and terminal events of the Responses protocol, and what they mean
 * for a Sonde job (what a cancel achieved is in cancel.ts).
 */
import type { JobStatus } from "../../events.js";

/** British `cancelled`, as on the wire (both providers). */
export const statusOf: Readonly<Record<string, JobStatus>> = {
  queued: "queued",
  in_progress: "running",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  incomplete: "incomplete",
};

export function jobStatusOf(status: string | null | undefined): JobStatus {
  return (status && statusOf[status]) || "running";
}

const terminalStatuses = new Set(["completed", "failed", "cancelled", "incomplete"]);

/** `cancelling` (Perplexity's cancel ack) and `requires_action` are not terminal. */
export function isTerminalWireStatus(status: string | null | undefined): boolean {
  return typeof status === "string" && terminalStatuses.has(status);
}

/** The status each terminal lifecycle event ends the job with (when its Response is unreadable). */
export const terminalOfEvent: Readonly<Record<string, JobStatus>> = {
  "response.completed": "completed",
  "response.failed": "failed",
  "response.incomplete": "incomplete",
  // Not in OpenAI's SDK union (webhooks have it); Perplexity lists it as a terminal.
  "response.cancelled": "cancelled",
};

/** Stream events after which the server sends nothing more for this response. */
export const terminalEventTypes: ReadonlySet<string> = new Set([...Object.keys(terminalOfEvent), "error"]);
