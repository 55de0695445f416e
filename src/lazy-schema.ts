/**
 * A zod schema built the first time it is used, not at import. Building Sonde's schemas
 * (the public event, ref and request schemas, each engine's settings) was half of Sonde's
 * own share of a cold `import("sonde")`; an app needs them only once it makes a client or a
 * job, and most never touch the event schemas at all.
 *
 * The value is a Proxy that builds the schema on its first touch and forwards every
 * operation to it, so through property access it is the schema: `parse`, `shape`,
 * `instanceof z.ZodObject`, `extend`, nesting inside another schema, `z.toJSONSchema`. Its
 * methods are bound to the Proxy, as a zod schema's are to the schema they are read from, so
 * what they return or register (`register`, `meta`, `optional().unwrap()`) is this value.
 * It cannot be frozen (`Object.freeze` throws a TypeError and leaves it as it was).
 *
 * Only for schemas whose outermost type is not a wrapper (optional, nullable, default,
 * catch, pipe, readonly, lazy, promise): zod's JSON Schema step for those looks the wrapper
 * up by its own identity, which is not the Proxy's. Wrap the schema inside instead.
 */
const traps =
  "set has ownKeys getOwnPropertyDescriptor defineProperty deleteProperty getPrototypeOf setPrototypeOf isExtensible";

export function lazySchema<T extends object>(build: () => T): T {
  let schema: T | undefined;
  // The Proxy's own target stays empty but for what the language requires it to mirror (the
  // schema's non-configurable properties, `_zod`) and a hook for Node's inspect, which reads
  // a Proxy's target without its traps.
  const target = Object.create(null);
  const built = (): T => {
    if (schema === undefined) {
      schema = build();
      for (const key of Reflect.ownKeys(schema)) {
        const descriptor = Reflect.getOwnPropertyDescriptor(schema, key)!;
        if (!descriptor.configurable) Reflect.defineProperty(target, key, descriptor);
      }
    }
    return schema;
  };
  target[Symbol.for("nodejs.util.inspect.custom")] = (
    _: number,
    options: object,
    inspect: (value: T, options: object) => string,
  ) => inspect(built(), options);
  const handler: ProxyHandler<T> = {
    get: (_, key, receiver) => Reflect.get(built(), key, receiver),
    // Refused, leaving the schema as it was: a non-extensible Proxy would need its target to
    // hold every property of the schema, which it does not.
    preventExtensions: () => false,
  };
  for (const trap of traps.split(" "))
    (handler as Record<string, unknown>)[trap] = (_: T, key: unknown, value: unknown) =>
      (Reflect as unknown as Record<string, (...args: unknown[]) => unknown>)[trap]!(built(), key, value);
  return new Proxy(target, handler);
}
