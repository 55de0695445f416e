/** Recorded transcripts and bodies under test/fixtures/<provider>/, read by path. */
import { readFileSync } from "node:fs";

const root = new URL("../fixtures/", import.meta.url);

/** A fixture's text by its path under test/fixtures (e.g. `openai/tools.sse`). */
export function fixture(path: string): string {
  return readFileSync(new URL(path, root), "utf8");
}

export function fixtureJson<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(fixture(path)) as T;
}

/** The fixture readers of one provider's folder (`fixturesOf("openai").fixture("tools.sse")`). */
export function fixturesOf(provider: string) {
  return {
    fixture: (name: string) => fixture(`${provider}/${name}`),
    fixtureJson: <T = Record<string, unknown>>(name: string) => fixtureJson<T>(`${provider}/${name}`),
  };
}
