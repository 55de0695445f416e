/**
 * `output_text.done` against what streamed, for both ways of citing: an annotated part
 * (OpenAI) keeps its text, an inline-citing one (Perplexity) only a fingerprint of it.
 * Either way the final text's missing tail is delivered once, with the citations it
 * completes, and a final text that disagrees with the stream adds nothing and says so.
 */
import { describe, expect, it, vi } from "vitest";
import { WebMarkers } from "../../providers/perplexity/citations.js";
import { urlAnnotations } from "../../src/protocols/responses/annotations.js";
import { StreamedReport } from "../../src/protocols/responses/report.js";
import { SourceIndex } from "../../src/protocols/responses/text.js";
import type { Logger } from "../../src/provider.js";

const part = { item_id: "msg_1", output_index: 0, content_index: 0 };

function report(inline: boolean) {
  const logger: Logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const sources = new SourceIndex();
  sources.add([{ id: 3, url: "https://example.org/3", title: "Three" }]);
  const streamed = new StreamedReport({
    inline: inline ? new WebMarkers() : undefined,
    annotations: inline ? undefined : urlAnnotations,
    sources,
    logger,
    provider: inline ? "perplexity" : "openai",
  });
  return { streamed, logger };
}

const delta = (text: string) => ({ type: "response.output_text.delta" as const, ...part, delta: text });
const done = (text: string) => ({ type: "response.output_text.done" as const, ...part, text });

describe.each([
  ["inline markers (fingerprinted part)", true],
  ["annotations (kept part)", false],
])("output_text.done, %s", (_, inline) => {
  it("delivers the final text's missing tail once", () => {
    const { streamed, logger } = report(inline);
    expect(streamed.delta(delta("Builder is "))).toEqual([{ type: "text", delta: "Builder is " }]);
    expect(streamed.delta(delta("$20 ü🔋 "))).toEqual([{ type: "text", delta: "$20 ü🔋 " }]);
    const full = "Builder is $20 ü🔋 a month [web:3].";
    const tail = streamed.textDone(done(full));
    expect(tail[0]).toEqual({ type: "text", delta: "a month [web:3]." });
    if (inline)
      expect(tail.slice(1)).toEqual([
        {
          type: "citation",
          citation: {
            url: "https://example.org/3",
            title: "Three",
            startIndex: full.indexOf("[web:3]"),
            endIndex: full.indexOf("[web:3]") + "[web:3]".length,
          },
        },
      ]);
    expect(streamed.emitted.reportLength).toBe(full.length);
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it("adds nothing when the final text is what streamed", () => {
    const { streamed } = report(inline);
    streamed.delta(delta("Builder is $20."));
    expect(streamed.textDone(done("Builder is $20."))).toEqual([]);
  });

  it("adds nothing, and warns, when the final text disagrees with the stream", () => {
    const { streamed, logger } = report(inline);
    streamed.delta(delta("Builder is $20"));
    expect(streamed.textDone(done("Builder is $25 a month."))).toEqual([]);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining("output_text.done disagrees with the streamed text"),
      expect.anything(),
    );
    expect(streamed.emitted.reportLength).toBe("Builder is $20".length);
  });
});
