/**
 * robots.txt (RFC 9309) for the engine's user agent, cached per origin for up to a day.
 * A missing file (4xx) allows everything; a server error, 429 or an unreadable file
 * disallows the site for now, as the RFC asks.
 */
import robotsParser from "robots-parser";

export type RobotsLoad = (robotsUrl: URL, signal: AbortSignal) => Promise<{ status: number; text: string }>;

type Verdict = { rules: ReturnType<typeof robotsParser> } | { all: true } | { none: string };

const TTL_MS = 24 * 60 * 60_000;
/** A site that could not answer is asked again sooner. */
const RETRY_MS = 10 * 60_000;

export class RobotsRules {
  #cache = new Map<string, { until: number; verdict: Promise<Verdict> }>();

  constructor(
    readonly load: RobotsLoad,
    /** The product token matched against `User-agent:` lines. */
    readonly agent: string,
    readonly now: () => number = Date.now,
  ) {}

  /** Why `url` must not be fetched, or `undefined` when robots.txt allows it. */
  async refusal(url: URL, signal: AbortSignal): Promise<string | undefined> {
    const verdict = await this.#verdict(url.origin, signal);
    if ("all" in verdict) return undefined;
    if ("none" in verdict) return verdict.none;
    return verdict.rules.isAllowed(url.href, this.agent) === false
      ? `${url.origin}/robots.txt disallows it for ${this.agent}`
      : undefined;
  }

  #verdict(origin: string, signal: AbortSignal): Promise<Verdict> {
    const cached = this.#cache.get(origin);
    if (cached && this.now() < cached.until) return cached.verdict;
    const robotsUrl = new URL("/robots.txt", origin);
    const verdict = this.load(robotsUrl, signal).then(
      ({ status, text }): Verdict => {
        if (status >= 200 && status < 300) return { rules: robotsParser(robotsUrl.href, text) };
        if (status >= 400 && status < 500 && status !== 429) return { all: true };
        return {
          none: `${robotsUrl.href} answered HTTP ${status}, so the site is treated as disallowed for now`,
        };
      },
      (error: unknown): Verdict => {
        // An aborted job decides nothing about the site: forget it.
        if (signal.aborted) {
          this.#cache.delete(origin);
          throw signal.reason;
        }
        return { none: `${robotsUrl.href} could not be read (${(error as Error).message})` };
      },
    );
    const entry = { until: this.now() + TTL_MS, verdict };
    this.#cache.set(origin, entry);
    void verdict.then(
      (v) => {
        if ("none" in v) entry.until = this.now() + RETRY_MS;
      },
      () => {},
    );
    return verdict;
  }
}
