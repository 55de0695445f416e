/**
 * Splits a leading `<think>…</think>` block off streamed content (some upstreams send
 * reasoning inline instead of in `delta.reasoning`). Holds back at most a partial tag,
 * so memory stays flat however long the thinking runs.
 */
const OPEN = "<think>";
const CLOSE = "</think>";

export interface Split {
  thinking: string;
  text: string;
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagAt(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

export class ThinkSplitter {
  #state: "start" | "thinking" | "after" | "text" = "start";
  #held = "";

  /** Past the thinking block with nothing held: every later chunk is report text as it is. */
  get settled(): boolean {
    return this.#state === "text" && this.#held === "";
  }

  push(chunk: string): Split {
    const out: Split = { thinking: "", text: "" };
    let buffer = this.#held + chunk;
    this.#held = "";
    while (buffer) {
      if (this.#state === "start") {
        const trimmed = buffer.trimStart();
        if (trimmed === "" || (trimmed.length < OPEN.length && OPEN.startsWith(trimmed))) {
          this.#held = buffer; // whitespace or a partial "<think>": wait for more
          return out;
        }
        if (trimmed.startsWith(OPEN)) {
          this.#state = "thinking";
          buffer = trimmed.slice(OPEN.length);
        } else {
          this.#state = "text";
        }
      } else if (this.#state === "thinking") {
        const end = buffer.indexOf(CLOSE);
        if (end >= 0) {
          out.thinking += buffer.slice(0, end);
          buffer = buffer.slice(end + CLOSE.length);
          this.#state = "after";
        } else {
          const keep = partialTagAt(buffer, CLOSE);
          out.thinking += buffer.slice(0, buffer.length - keep);
          this.#held = buffer.slice(buffer.length - keep);
          return out;
        }
      } else if (this.#state === "after") {
        // The report starts after the whitespace that follows </think>.
        buffer = buffer.trimStart();
        if (buffer) this.#state = "text";
      } else {
        out.text += buffer;
        buffer = "";
      }
    }
    return out;
  }

  /** Whatever is held back, at the end of the stream. */
  flush(): Split {
    const held = this.#held;
    this.#held = "";
    if (this.#state === "thinking") return { thinking: held, text: "" };
    return { thinking: "", text: this.#state === "after" ? "" : held };
  }
}
