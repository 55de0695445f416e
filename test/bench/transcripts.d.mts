/** Types of transcripts.mjs (plain JavaScript, so that fresh benchmark processes need no compiler). */
export interface BenchEngine {
  model: string;
  path: string;
  settings(url: string): Record<string, unknown>;
  transcript(deltas: number): { body: string; report: string };
}
export const engines: Record<string, BenchEngine>;
export function deltaText(i: number): string;
export function floorDelta(engine: string, data: unknown): string | undefined;
