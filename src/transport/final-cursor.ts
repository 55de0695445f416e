/**
 * The cursor of a poll-only job's terminal snapshot. Poll snapshots have no resume
 * token of their own; giving the final one a fixed cursor lets a ref taken while its
 * events were being delivered (cursor + cursorOffset) resume exactly after them. In a
 * module of its own, so that a session can name it without loading the poller.
 */
export const FINAL_CURSOR = "final";
