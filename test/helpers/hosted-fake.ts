/**
 * The hosted job API as the worker tests fake it over loopback (providers/hosted/WIRE.md): the
 * model id, a client pointed at a fake, and the bodies the API answers with.
 */
import type { ServerResponse } from "node:http";
import { Sonde, type SondeOptions } from "../../src/index.js";

export const HOSTED = "hosted:agents.deep_research";

/** A client of the hosted API at `baseURL` (none: the environment's), retrying fast. */
export const hostedClient = (baseURL?: string, extra: Partial<SondeOptions> = {}) =>
  new Sonde({
    env: {},
    hosted: { apiKey: "hosted-key-0123456789abcdef", ...(baseURL && { baseURL }) },
    retry: { attempts: 1, minDelayMs: 20, maxDelayMs: 40 },
    ...extra,
  });

/** A JSON answer. */
export const reply = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
};

/** The answer to an invoke: the job, queued. */
export const invoked = (jobId: string) => ({
  job_id: jobId,
  status: "queued",
  agent_id: "agents.deep_research",
  poll_url: `/v1/jobs/${jobId}`,
  estimated_cost_usd: 6,
  created_at: new Date().toISOString(),
});

/** A poll of a finished job. */
export const completed = (jobId: string) => ({
  job_id: jobId,
  status: "completed",
  result: { content: `Report of ${jobId}.`, citations: [], charge_usd: 1 },
});
