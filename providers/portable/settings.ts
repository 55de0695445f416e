/**
 * The portable engine's section of the client options (`new Sonde({ portable })`) as a zod
 * schema: the one statement of what is accepted, from which both the `PortableSettings` type
 * and the run-time checks (with messages that say what to pass) come.
 */
import { z } from "zod";
import { InvalidRequestError } from "../../src/errors.js";
import { lazySchema } from "../../src/lazy-schema.js";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import type { SearchProvider } from "./search.js";
import type { Fetcher, JobStore, SearchBackend } from "./types.js";

const hasMethod = (value: unknown, name: string) =>
  !!value && typeof value === "object" && typeof (value as Record<string, unknown>)[name] === "function";

/** The methods a job store object must have. */
export const storeMethods = [
  "putJob",
  "getJob",
  "deleteJob",
  "appendEvent",
  "readEvents",
  "putReceipt",
  "readReceipts",
  "claimKey",
  "releaseKey",
] as const;

/** A search backend object (checked first: an object with `search()` is a backend, whatever else it has). */
export const isSearchBackend = (value: unknown): value is SearchBackend => hasMethod(value, "search");
const searchBackend = lazySchema(() => z.custom<SearchBackend>(isSearchBackend));
const searchConfig = lazySchema(() =>
  z.object({
    provider: z.enum(["tavily", "brave", "searxng"]),
    apiKey: z.string().optional(),
    baseURL: z.string().optional(),
    maxResults: z.number().optional(),
  }),
);

/** The built-in search APIs: where each is, and whether it needs a key. */
export const searchDefaults: Record<SearchProvider, { baseURL?: string; needsKey: boolean }> = {
  tavily: { baseURL: "https://api.tavily.com", needsKey: true },
  brave: { baseURL: "https://api.search.brave.com", needsKey: true },
  searxng: { needsKey: false },
};

/** `portable.search`: a backend object, or the name of a search API with its key. */
export const searchSchema = lazySchema(() =>
  z.union([searchBackend, searchConfig] as const, {
    error:
      'portable.search must be an object with search(query, { signal }) or { provider: "tavily" | "brave" | "searxng", apiKey?, baseURL? }.',
  }),
);

/** `portable.fetcher`: any object with `fetch(url, { signal })`. */
export const fetcherSchema = lazySchema(() =>
  z.custom<Fetcher>((value) => hasMethod(value, "fetch"), {
    error: "portable.fetcher must be an object with fetch(url, { signal }).",
  }),
);

/** `portable.store`: a `JobStore`, or `{ dir }` for the file store (Node only). */
export const storeSchema = lazySchema(() =>
  z.union(
    [
      z.custom<JobStore>((value) => storeMethods.every((method) => hasMethod(value, method))),
      z.custom<{ dir: string }>((value) => {
        const dir = (value as { dir?: unknown } | null)?.dir;
        return typeof dir === "string" && dir !== "";
      }),
    ] as const,
    {
      error: `portable.store must be a JobStore (${storeMethods.join(", ")}) or { dir } for the file store.`,
    },
  ),
);

/** Options of the portable (local) engine: `new Sonde({ portable: { … } })`. */
export const portableSettingsSchema = lazySchema(() =>
  z.strictObject({
    /** Chat endpoints by name: `portable:<name>/<model>` uses `chat[name]`. */
    chat: z.record(z.string(), z.object({ baseURL: z.string(), apiKey: z.string().optional() })).optional(),
    /** A search backend object, or `{ provider: "tavily" | "brave" | "searxng", apiKey?, baseURL? }`. */
    search: searchSchema.optional(),
    /**
     * A fetcher object (url → text). Default: `defaultFetcher()` from `sonde/providers/portable`
     * (no private-network targets, robots.txt, main content, PDFs, charsets).
     */
    fetcher: fetcherSchema.optional(),
    /** A job store object, or `{ dir }` for the file store (Node only). */
    store: storeSchema.optional(),
    /** Jobs this process runs at once; more wait for a slot. @defaultValue 2 */
    maxConcurrentJobs: z
      .custom<number>((value) => Number.isInteger(value) && (value as number) >= 1, {
        error: "portable.maxConcurrentJobs must be a positive integer.",
      })
      .optional(),
    /**
     * How long a process's lease on a job lasts unless renewed (renewed every third of it), on
     * stores with leases: a process that dies holding it blocks the job this long. @defaultValue 15_000
     */
    leaseMs: z
      .custom<number>(
        (value) => Number.isInteger(value) && (value as number) >= 100 && (value as number) < 2 ** 31,
        {
          error:
            "portable.leaseMs must be an integer from 100 to 2147483647 (milliseconds; a timer set longer fires at once).",
        },
      )
      .optional(),
  }),
);

/** Options of the portable (local) engine; see `sonde/providers/portable`. */
export type PortableSettings = z.input<typeof portableSettingsSchema>;

/**
 * One field of the portable settings, checked against its schema: the typed value, or an
 * `InvalidRequestError` with the schema's message.
 */
export function checked<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value, UNCOMPILED);
  if (parsed.success) return parsed.data;
  throw new InvalidRequestError(parsed.error.issues[0]?.message ?? "Invalid portable settings.");
}
