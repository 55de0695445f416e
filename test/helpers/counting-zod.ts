/** What `countingZod` records: how many zod schema constructors were called, and which. */
export interface ZodCounter {
  calls: number;
  names: string[];
}

/**
 * The zod module with its `z` namespace counting schema constructor calls (`z.string()`,
 * `z.object()`…), for tests that check when Sonde builds its schemas. Use it from a `vi.mock`
 * factory with the original module: it must not import zod itself (that is the mocked module).
 */
export function countingZod<M extends { z: object }>(zod: M, counter: ZodCounter): M {
  const counting = new Proxy(zod.z, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function" || typeof key !== "string" || !/^[a-z]/.test(key)) return value;
      return (...args: unknown[]) => {
        counter.calls++;
        counter.names.push(key);
        return (value as (...args: unknown[]) => unknown)(...args);
      };
    },
  });
  return { ...zod, z: counting };
}
