/** Options every provider's msw handler factory (`providerHandlers.<name>(…)`) accepts. */
export interface ProviderMockOptions {
  /** Where the handlers listen. @defaultValue the provider's real base URL */
  baseURL?: string;
  /** The report the simulated job produces. @defaultValue "Mock report." */
  report?: string;
  citations?: { url: string; title?: string; snippet?: string }[];
  /** The provider job id the simulated job gets. */
  jobId?: string;
  /** Make the job-creating request fail with this HTTP status and body. */
  fail?: { status: number; body?: unknown; headers?: Record<string, string> };
}
