/**
 * `load` (a lazy `import()`, mostly), run once and shared by every caller; a failure is not
 * kept, so the next call tries again (a chunk a flaky network or a redeploy lost comes back).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}
