/**
 * A fast path for the one event shape that is nearly every event of a stream (a text
 * delta): one anchored regular expression per protocol recognises its `data:` text and
 * captures every field, without `JSON.parse`. The payload (the delivered event's `rawEvent`)
 * is built from the captures, key for key as `JSON.parse` builds it: at once where it is the
 * decoded event too (Responses), on first read elsewhere (`LazyWire`). `JSON.parse` of the
 * whole payload costs about as much as everything else Sonde does per delta; the match costs
 * a fraction of it.
 *
 * Exact by construction: a pattern spells out compact JSON (no whitespace between tokens)
 * with these fragments only, each of which matches nothing but a well-formed JSON token,
 * and names each key once (or captures the last of a repeated one, the one JSON.parse
 * keeps), so a line it accepts is one `JSON.parse` accepts too and the captures are that
 * parse's values. Anything else does not match, and the caller takes the general path
 * (`JSON.parse` and the schema). test/transport/fast-json.test.ts checks the protocols'
 * patterns against `JSON.parse` on generated, adversarial and recorded input.
 */

/**
 * Parse options for a zod schema that reads a few payloads per job (lifecycle events, the
 * final response, a request): zod's compiled parser costs more to build on its first use
 * (a few ms per schema, in every fresh process) than it saves on a handful of parses.
 */
export const UNCOMPILED = { jitless: true } as const;

/** A non-negative integer of at most 15 digits (exact as a double), no leading zero. */
export const UINT = "(?:0|[1-9]\\d{0,14})";
/** The characters of a string token without escapes: no quote, backslash or control character. */
export const PLAIN = '[^"\\\\\\x00-\\x1f]*';
/** The characters of any string token, escapes exactly as JSON has them (a backslash, then one of `"\/bfnrt` or `u` and four hex digits). */
const CHARS = `(?:[^"\\\\\\x00-\\x1f]|\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4}))*`;
/**
 * A string token's content, captured twice over: group one when it has no escape (the
 * value as it is), else group two (to be unescaped by `stringValue`).
 */
export const STRING = `(?:(${PLAIN})|(${CHARS}))`;

/** The value of a `STRING` capture: `plain` as it is, or `escaped` unescaped (its escapes are JSON's). */
export function stringValue(plain: string | undefined, escaped: string | undefined): string {
  return plain ?? (JSON.parse(`"${escaped}"`) as string);
}

/**
 * A wire event whose payload was read by a fast path: `event` is what it decoded, and the
 * payload (`data`, which becomes the delivered event's `rawEvent`) is only built if something
 * reads it (a job's `result()` alone never does). `build` makes it from the pattern's captures
 * without `JSON.parse`: the same object `JSON.parse` gives, keys in the same order, since the
 * pattern names every key the text has.
 */
export class LazyWire<E> {
  #match: RegExpExecArray | undefined;
  #data: unknown;

  constructor(
    readonly cursor: string | undefined,
    match: RegExpExecArray,
    readonly build: (match: RegExpExecArray, event: E) => unknown,
    readonly event: E,
  ) {
    this.#match = match;
  }

  get data(): unknown {
    if (this.#match !== undefined) {
      this.#data = this.build(this.#match, this.event);
      this.#match = undefined;
    }
    return this.#data;
  }
}

/** A `STRING` capture pair at `at`, `at + 1` of `match`, when the key was present. */
export function stringAt(match: RegExpExecArray, at: number): string | undefined {
  const plain = match[at];
  const escaped = match[at + 1];
  return plain === undefined && escaped === undefined ? undefined : stringValue(plain, escaped);
}
