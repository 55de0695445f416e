/**
 * `sonde/worker`: research jobs on a BullMQ queue (bullmq, an optional peer) for fleets:
 * web servers enqueue, workers drive, any process reads status, results and live events.
 */
export {
  createResearchQueue,
  type EnqueuedJob,
  JobNotDeferredError,
  type QueuedRequest,
  type QueueSetup,
  type ResearchQueue,
} from "./queue.js";
export type { SettledJob, SettledOptions } from "./settled.js";
export type { WorkerJobState, WorkerJobStatus } from "./state.js";
export {
  InvalidWebhookSignatureError,
  type OpenAIWebhookEvent,
  openAIWebhookHandler,
  verifyOpenAIWebhook,
  type WebhookHeaders,
} from "./webhooks.js";
export {
  createResearchWorker,
  MAX_RETRYABLE_FAILURES,
  type ResearchWorker,
  type WorkerSetup,
} from "./worker.js";
