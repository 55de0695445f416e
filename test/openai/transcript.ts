/**
 * A long, seeded OpenAI Responses background stream in the wire format of
 * providers/openai/WIRE.md: lifecycle events carrying the full Response,
 * reasoning items, web searches (search, open_page, find_in_page), thousands of text
 * deltas mixing ASCII, accents, CJK and emoji (ZWJ sequences, flags), inline citations
 * annotated a few deltas late with code-point offsets, and gaps in `sequence_number`.
 */

import { framing, sseEvent } from "../helpers/sse.js";

export const RESPONSE_ID = "resp_7c0ffee5eed0000000000000000000aa";

import { prng } from "../helpers/prng.js";

export { prng };

export interface Transcript {
  /** The SSE payloads, in order. */
  events: Record<string, unknown>[];
  /** The wire bytes of each event (`event:` + `data:` + blank line). */
  blocks: Buffer[];
  /** The whole uninterrupted stream. */
  bytes: Buffer;
  /** Byte offset just past each event's blank line, in `bytes`. */
  ends: number[];
  /** The terminal Response (what a poll returns once it is done). */
  final: Record<string, unknown>;
  /** The Response as a poll sees it while running: some output, no usage. */
  running: Record<string, unknown>;
  report: string;
}

const words = [
  "battery",
  "regulation",
  "due",
  "diligence",
  "carbon",
  "footprint",
  "declaration",
  "recycled",
  "content",
  "the",
  "of",
  "and",
  "to",
  "from",
  "2025",
  "2027",
  "Brüssel",
  "évaluation",
  "Ökodesign",
  "naïve",
  "電池規則",
  "改正",
  "東京",
  "リサイクル",
  "欧州連合",
  "🔋",
  "⚡",
  "🇪🇺",
  "🇯🇵",
  "👩‍🔬",
  "👨‍👩‍👧",
  "🧪",
  "✅",
  "“quoted”",
  "—",
  "…",
  "café",
  "straße",
  "한국어",
  "中文",
  "数据",
];

function response(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: RESPONSE_ID,
    object: "response",
    created_at: 1767000000,
    status,
    background: true,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    model: "o4-mini-deep-research-2025-06-26",
    output: [],
    parallel_tool_calls: true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: "medium", summary: "auto" },
    safety_identifier: null,
    service_tier: "auto",
    store: true,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [{ type: "web_search_preview", search_context_size: "medium", user_location: null }],
    top_logprobs: 0,
    top_p: 1,
    truncation: "disabled",
    usage: null,
    user: null,
    metadata: {},
    ...extra,
  };
}

export function longTranscript(
  options: { seed?: number; deltas?: number; rounds?: number } = {},
): Transcript {
  const random = prng(options.seed ?? 7);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const events: Record<string, unknown>[] = [];
  let sequence = 0;
  const push = (event: Record<string, unknown>) => {
    const { type, ...rest } = event;
    events.push({ type, sequence_number: sequence, ...rest });
    // Mostly contiguous, sometimes a gap: only increase is promised.
    sequence += random() < 0.03 ? 2 + Math.floor(random() * 3) : 1;
  };
  const output: Record<string, unknown>[] = [];

  push({ type: "response.created", response: response("queued") });
  push({ type: "response.queued", response: response("queued") });
  push({ type: "response.in_progress", response: response("in_progress") });

  const rounds = options.rounds ?? 12;
  let index = 0;
  for (let round = 0; round < rounds; round++) {
    const rsId = `rs_${round.toString(16).padStart(4, "0")}aa11bb22cc33`;
    push({
      type: "response.output_item.added",
      output_index: index,
      item: { id: rsId, type: "reasoning", summary: [] },
    });
    const summary = round % 3 === 0 ? [`**Step ${round}** — checking ${pick(words)} ${pick(words)}`] : [];
    for (const [si, text] of summary.entries()) {
      push({
        type: "response.reasoning_summary_part.added",
        item_id: rsId,
        output_index: index,
        summary_index: si,
        part: { type: "summary_text", text: "" },
      });
      push({
        type: "response.reasoning_summary_text.delta",
        item_id: rsId,
        output_index: index,
        summary_index: si,
        delta: text,
        obfuscation: "Zq9",
      });
      push({
        type: "response.reasoning_summary_text.done",
        item_id: rsId,
        output_index: index,
        summary_index: si,
        text,
      });
      push({
        type: "response.reasoning_summary_part.done",
        item_id: rsId,
        output_index: index,
        summary_index: si,
        part: { type: "summary_text", text },
      });
    }
    const rsItem = {
      id: rsId,
      type: "reasoning",
      summary: summary.map((text) => ({ type: "summary_text", text })),
    };
    push({ type: "response.output_item.done", output_index: index, item: rsItem });
    output.push(rsItem);
    index++;

    const wsId = `ws_${round.toString(16).padStart(4, "0")}dd44ee55ff66`;
    const url = `https://source${round}.example.org/page/${round}`;
    const action =
      round % 3 === 0
        ? { type: "search", query: `${pick(words)} ${pick(words)} ${round}`, sources: [{ type: "url", url }] }
        : round % 3 === 1
          ? { type: "open_page", url }
          : { type: "find_in_page", url, pattern: pick(words) };
    push({
      type: "response.output_item.added",
      output_index: index,
      item: { id: wsId, type: "web_search_call", status: "in_progress" },
    });
    push({ type: "response.web_search_call.in_progress", output_index: index, item_id: wsId });
    push({ type: "response.web_search_call.searching", output_index: index, item_id: wsId });
    push({ type: "response.web_search_call.completed", output_index: index, item_id: wsId });
    const wsItem = { id: wsId, type: "web_search_call", status: "completed", action };
    push({ type: "response.output_item.done", output_index: index, item: wsItem });
    output.push(wsItem);
    index++;
  }

  // The report: words, and every so often an inline markdown citation the server annotates.
  const msgId = "msg_5eed5eed5eed5eed5eed5eed";
  const pieces: string[] = [];
  const annotations: Record<string, unknown>[] = [];
  let codePoints = 0;
  const totalDeltas = options.deltas ?? 3000;
  const add = (text: string) => {
    pieces.push(text);
    codePoints += Array.from(text).length;
  };
  let citationNumber = 0;
  while (pieces.length < totalDeltas * 2.5) {
    add(`${pick(words)} `);
    if (random() < 0.02) {
      const round = citationNumber % rounds;
      const href = `https://source${round}.example.org/page/${round}?utm_source=openai`;
      const span = `([source${round}.example.org](${href}))`;
      const start = codePoints;
      add(`${span} `);
      annotations.push({
        type: "url_citation",
        end_index: start + Array.from(span).length,
        start_index: start,
        title: `Source ${round} — ${pick(words)}`,
        url: href,
      });
      citationNumber++;
    }
    if (random() < 0.01) add("\n\n");
  }
  const report = pieces.join("");
  const chars = Array.from(report);

  push({
    type: "response.output_item.added",
    output_index: index,
    item: { id: msgId, type: "message", status: "in_progress", content: [], role: "assistant" },
  });
  push({
    type: "response.content_part.added",
    item_id: msgId,
    output_index: index,
    content_index: 0,
    part: { type: "output_text", annotations: [], logprobs: [], text: "" },
  });
  let position = 0;
  let next = 0;
  const due: { annotation: Record<string, unknown>; at: number; number: number }[] = [];
  let deltaNumber = 0;
  const approximate = Math.max(1, Math.round(chars.length / totalDeltas));
  while (position < chars.length) {
    const size = Math.max(1, Math.min(chars.length - position, approximate + Math.floor(random() * 3) - 1));
    const delta = chars.slice(position, position + size).join("");
    position += size;
    deltaNumber++;
    push({
      type: "response.output_text.delta",
      item_id: msgId,
      output_index: index,
      content_index: 0,
      delta,
      logprobs: [],
      obfuscation: "Abc".slice(0, 1 + (deltaNumber % 3)),
    });
    while (next < annotations.length && (annotations[next]!.end_index as number) <= position) {
      due.push({ annotation: annotations[next]!, at: deltaNumber, number: next });
      next++;
    }
    // Annotations follow their span by a couple of deltas, as in recorded streams.
    while (due.length > 0 && deltaNumber - due[0]!.at >= 2) {
      const { annotation, number } = due.shift()!;
      push({
        type: "response.output_text.annotation.added",
        item_id: msgId,
        output_index: index,
        content_index: 0,
        annotation_index: number,
        annotation,
      });
    }
  }
  for (const { annotation, number } of due) {
    push({
      type: "response.output_text.annotation.added",
      item_id: msgId,
      output_index: index,
      content_index: 0,
      annotation_index: number,
      annotation,
    });
  }
  const part = { type: "output_text", annotations, logprobs: [], text: report };
  push({
    type: "response.output_text.done",
    item_id: msgId,
    output_index: index,
    content_index: 0,
    text: report,
    logprobs: [],
  });
  push({ type: "response.content_part.done", item_id: msgId, output_index: index, content_index: 0, part });
  const msgItem = { id: msgId, type: "message", status: "completed", content: [part], role: "assistant" };
  push({ type: "response.output_item.done", output_index: index, item: msgItem });
  output.push(msgItem);

  const usage = {
    input_tokens: 60506,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 22883,
    output_tokens_details: { reasoning_tokens: 20416 },
    total_tokens: 83389,
  };
  const final = response("completed", { completed_at: 1767000600, output, usage });
  push({ type: "response.completed", response: final });

  return {
    ...frame(events, (event) => sseEvent(event, framing.openai.name(event))),
    final,
    running: response("in_progress", { output: output.slice(0, 4) }),
    report,
  };
}

/** The wire bytes of `events`, one block each as `block` frames it, and where each ends. */
export function frame(
  events: Record<string, unknown>[],
  block: (event: Record<string, unknown>) => string,
): Pick<Transcript, "events" | "blocks" | "bytes" | "ends"> {
  const blocks = events.map((event) => Buffer.from(block(event), "utf8"));
  const ends: number[] = [];
  let total = 0;
  for (const bytes of blocks) {
    total += bytes.length;
    ends.push(total);
  }
  return { events, blocks, bytes: Buffer.concat(blocks), ends };
}

/** The stream a resume after `startingAfter` sends: every event with a larger `sequence_number`. */
export function resumeBytes(transcript: Transcript, startingAfter: number | undefined): Buffer {
  if (startingAfter === undefined) return transcript.bytes;
  const from = transcript.events.findIndex((event) => (event.sequence_number as number) > startingAfter);
  return from < 0 ? Buffer.alloc(0) : Buffer.concat(transcript.blocks.slice(from));
}

/** Index of the last event wholly inside the first `offset` bytes (-1 when none). */
export function lastCompleteEvent(transcript: Transcript, offset: number): number {
  let last = -1;
  for (const [i, end] of transcript.ends.entries()) {
    if (end <= offset) last = i;
    else break;
  }
  return last;
}
