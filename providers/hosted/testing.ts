/**
 * msw handlers that speak the hosted job API (hosted-job-api.md): invoke returns a
 * queued job with its poll URL and a 6.00 reservation, and a second invoke while one
 * is in flight gets 429 with Retry-After (one job per organization). Polls go queued →
 * running → completed with `{content, citations, charge_usd}`; DELETE cancels (a job
 * that already ran is charged, one still queued is not) and answers 409 once terminal.
 */
import type { HttpHandler } from "msw";
import { loadMsw } from "../../src/testing/msw/load.js";
import type { ProviderMockOptions } from "../../src/testing/provider-mock.js";

/** Where the mock listens unless told otherwise (the service has no public URL). */
export const defaultMockBaseURL = "https://hosted.sonde.test";

interface MockJob {
  id: string;
  polls: number;
  status: "queued" | "running" | "completed" | "canceled";
  result?: Record<string, unknown>;
}

export function handlers(options: ProviderMockOptions = {}): HttpHandler[] {
  const { http, HttpResponse } = loadMsw();
  const base = (options.baseURL ?? defaultMockBaseURL).replace(/\/$/, "");
  const report = options.report ?? "Mock report.";
  const jobs = new Map<string, MockJob>();
  let count = 0;
  const inFlight = () => [...jobs.values()].some((j) => j.status === "queued" || j.status === "running");
  const view = (job: MockJob) => ({
    job_id: job.id,
    status: job.status,
    ...(job.result && { result: job.result }),
  });

  return [
    http.post(`${base}/v1/agents/:agent/invoke`, ({ params }) => {
      if (options.fail)
        return HttpResponse.json(options.fail.body ?? { error: { message: "Mock failure" } }, {
          status: options.fail.status,
          headers: options.fail.headers,
        });
      if (inFlight())
        return HttpResponse.json(
          { error: { message: "A job is already in flight for this organization" } },
          { status: 429, headers: { "Retry-After": "30" } },
        );
      count++;
      const id = options.jobId && count === 1 ? options.jobId : `job_mock_${String(count).padStart(4, "0")}`;
      jobs.set(id, { id, polls: 0, status: "queued" });
      return HttpResponse.json({
        job_id: id,
        status: "queued",
        agent_id: String(params.agent),
        poll_url: `/v1/jobs/${id}`,
        estimated_cost_usd: 6.0,
        created_at: "2026-07-01T10:00:00Z",
      });
    }),

    http.get(`${base}/v1/jobs/:id`, ({ params }) => {
      const job = jobs.get(String(params.id));
      if (!job) return HttpResponse.json({ error: { message: "Job not found" } }, { status: 404 });
      if (job.status === "queued" || job.status === "running") {
        job.polls++;
        if (job.polls === 1) job.status = "running";
        else {
          job.status = "completed";
          job.result = {
            content: report,
            citations: (options.citations ?? []).map((c) => ({
              title: c.title ?? c.url,
              url: c.url,
              snippet: c.snippet ?? "",
            })),
            charge_usd: 4.12,
          };
        }
      }
      return HttpResponse.json(view(job));
    }),

    http.delete(`${base}/v1/jobs/:id`, ({ params }) => {
      const job = jobs.get(String(params.id));
      if (!job) return HttpResponse.json({ error: { message: "Job not found" } }, { status: 404 });
      if (job.status === "completed" || job.status === "canceled")
        return HttpResponse.json({ error: { message: `Job is already ${job.status}` } }, { status: 409 });
      // Work done while running is charged; a job canceled while queued costs nothing.
      if (job.status === "running") job.result = { charge_usd: 1.37 };
      job.status = "canceled";
      return HttpResponse.json({ job_id: job.id, status: job.status });
    }),
  ];
}
