/**
 * How `new Sonde()` carries every engine without loading them all: each engine is wired in
 * as its light spec (catalog entries, options, request and ref checks, and what the job reads
 * from a session before it connects), and its heavy part (session, mapper, wire schemas,
 * protocol) is imported when a job of that engine starts or attaches, or a ref of it is read
 * or cancelled. The first request waits for it. `createSonde({ adapters })` is given whole
 * adapters and loads nothing lazily.
 */
import { MissingDependencyError } from "./errors.js";
import { loadOnce } from "./load-once.js";
import type {
  ConnectOptions,
  EngineAttachOptions,
  EngineSession,
  MappedEvent,
  ProviderContext,
  ResearchAdapter,
  ResolvedRequest,
  WireEvent,
} from "./provider.js";
import type { JobRef } from "./ref.js";

/** What a job reads from an engine's sessions before the first one connects: the same for all of them. */
export interface SessionTraits {
  readonly resumable: boolean;
  readonly local?: boolean;
  cursorRank?(cursor: string): number | undefined;
}

/**
 * An engine's synchronous part: everything of its adapter but the four calls that need its
 * session code, plus its sessions' traits and the throws `start()` and `attach()` make before
 * a session exists (beyond `validate` and `checkConfig`, which run first).
 */
export interface EngineSpec extends Omit<ResearchAdapter, "start" | "attach" | "get" | "cancel"> {
  readonly session: SessionTraits;
  checkStart?(request: ResolvedRequest, context: ProviderContext): void;
  checkAttach?(ref: JobRef, context: ProviderContext): void;
}

type Wire = WireEvent | readonly WireEvent[];

/**
 * A session whose engine is not loaded yet. Until it is, it answers from the engine's traits
 * and the ref (an attached job's `toRef()` gives the ref's own `resume`); the first pull of
 * its first connection loads the engine and makes the real session, which answers from then on.
 */
class LazySession implements EngineSession {
  readonly #traits: SessionTraits;
  readonly #make: () => Promise<EngineSession>;
  readonly #ref: JobRef | undefined;
  #session: EngineSession | undefined;
  #making: Promise<EngineSession> | undefined;
  /** Only on local engines' sessions, as on their real ones (a job tells a local job by it). */
  declare detach?: () => Promise<void>;

  constructor(traits: SessionTraits, make: () => Promise<EngineSession>, ref?: JobRef) {
    this.#traits = traits;
    this.#make = make;
    this.#ref = ref;
    // Before it loads, this process runs nothing of the job: nothing to pause.
    if (traits.local) this.detach = async () => this.#session?.detach?.();
  }

  get jobId(): string | undefined {
    return this.#session ? this.#session.jobId : this.#ref?.jobId;
  }

  get resumable(): boolean {
    return (this.#session ?? this.#traits).resumable;
  }

  get local(): boolean | undefined {
    return this.#traits.local;
  }

  cursorRank(cursor: string): number | undefined {
    return (this.#session ?? this.#traits).cursorRank?.(cursor);
  }

  deadlineAt(): string | undefined {
    return this.#session?.deadlineAt?.();
  }

  resumeState(): Record<string, unknown> {
    return this.#session ? this.#session.resumeState() : { ...this.#ref?.resume };
  }

  map(wire: WireEvent): MappedEvent[] {
    return this.#session!.map(wire);
  }

  connect(options: ConnectOptions): AsyncIterable<Wire> {
    if (this.#session) return this.#session.connect(options);
    let inner: AsyncIterator<Wire> | undefined;
    let closed = false;
    const open = async (): Promise<IteratorResult<Wire>> => {
      this.#making ??= this.#make().then((session) => (this.#session = session));
      const session = await this.#making;
      // Closed (aborted) while the engine loaded: nothing is sent.
      if (closed) return { done: true, value: undefined };
      inner = session.connect(options)[Symbol.asyncIterator]();
      return inner.next();
    };
    const iterator: AsyncIterator<Wire> = {
      next: () => (inner ? inner.next() : open()),
      return: async (value?: unknown) => {
        closed = true;
        return (await inner?.return?.(value)) ?? { done: true, value: undefined };
      },
    };
    return { [Symbol.asyncIterator]: () => iterator };
  }
}

/**
 * The adapter `new Sonde()` runs for an engine: its spec at once, and the adapter `load`
 * imports on first use. A failed import is a `MissingDependencyError` (not retryable) saying
 * how to get the engine, and the next use tries again.
 */
export function lazyAdapter(spec: EngineSpec, load: () => Promise<ResearchAdapter>): ResearchAdapter {
  const { session: traits, checkStart, checkAttach, ...adapter } = spec;
  const { provider } = spec;
  const loadEngine = loadOnce(load);
  const engine = () =>
    loadEngine().catch((cause: unknown) => {
      throw new MissingDependencyError(
        "sonde",
        `${provider}: Sonde's ${provider} engine failed to load (${(cause as Error)?.message ?? cause}). ` +
          `Reinstall sonde, or check that your bundler kept its chunks; createSonde with "sonde/providers/${provider}" loads it up front.`,
        { provider, cause },
      );
    });
  // Started when a job is made, so the engine loads while the caller goes on; its first pull awaits it.
  const prefetch = () => void engine().catch(() => {});
  return {
    ...adapter,
    start(request: ResolvedRequest, context: ProviderContext) {
      checkStart?.(request, context);
      prefetch();
      return new LazySession(traits, async () => (await engine()).start(request, context));
    },
    attach(ref: JobRef, context: ProviderContext, options?: EngineAttachOptions) {
      checkAttach?.(ref, context);
      prefetch();
      return new LazySession(traits, async () => (await engine()).attach(ref, context, options), ref);
    },
    get: async (ref, context) => (await engine()).get(ref, context),
    cancel: async (ref, context) => (await engine()).cancel(ref, context),
  };
}
