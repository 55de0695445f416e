/**
 * What a run that lost its stream has cost so far, by Sonde's count. OpenRouter reports
 * tokens and its charge only in the last chunk, and Perplexity keeps running (and billing)
 * after a disconnect, so a drop would otherwise leave a cost of 0. Tokens are estimated at
 * about four characters each (the usual rule for English text under BPE tokenizers); the
 * core prices them at catalog rates, with the per-request fee. A labelled estimate: the
 * generation endpoint (research.get) has the real charge once the run ends.
 */
import type { UsageReport } from "../../src/provider.js";

const CHARS_PER_TOKEN = 4;

function tokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Character counts of what was sent and received; no text is kept. */
export class ReceivedTally {
  readonly #promptChars: number;
  #textChars = 0;
  #reasoningChars = 0;

  constructor(promptChars: number) {
    this.#promptChars = promptChars;
  }

  text(delta: string): void {
    this.#textChars += delta.length;
  }

  /** Reasoning is billed whether or not it is shown, so hidden reasoning counts too. */
  reasoning(delta: string): void {
    this.#reasoningChars += delta.length;
  }

  /** Usage counts for the estimate: the prompt, the report text and the reasoning so far. */
  usage(internalReasoning: boolean): UsageReport {
    const reasoning = tokens(this.#reasoningChars);
    return {
      modelCalls: 1,
      inputTokens: tokens(this.#promptChars),
      outputTokens: tokens(this.#textChars),
      ...(internalReasoning ? { internalReasoningTokens: reasoning } : { reasoningTokens: reasoning }),
    };
  }
}
