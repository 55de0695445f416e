/**
 * A long, seeded Perplexity Agent API background stream in the wire format of
 * providers/perplexity/WIRE.md §4: bare `data:` lines (no `event:` line),
 * `sequence_number` from 0 and contiguous, a reasoning trace with search queries and
 * results (integer ids unique across the run, in blocks 1…, 21…, 41… as in the P6
 * capture) and fetched pages, then hundreds of text deltas mixing ASCII, accents, CJK and
 * emoji with `[web:N]` markers (some split across deltas), and `response.completed` with
 * the full output and `usage.cost`. Resume helpers are the OpenAI transcript's.
 */
import { sseEvent } from "../helpers/sse.js";
import { frame, prng, type Transcript } from "../openai/transcript.js";

export const AGENT_RESPONSE_ID = "resp_5eed0000-7c0f-4fee-9a11-0000000000aa";

const words = [
  "vector",
  "database",
  "pricing",
  "index",
  "storage",
  "the",
  "of",
  "and",
  "per",
  "month",
  "$20",
  "$50",
  "Ökodesign",
  "évaluation",
  "naïve",
  "ベクトル",
  "検索",
  "数据库",
  "價格",
  "🔋",
  "⚡",
  "🇪🇺",
  "👩‍🔬",
  "👨‍👩‍👧",
  "“quoted”",
  "—",
  "café",
  "한국어",
];

function snapshot(status: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: AGENT_RESPONSE_ID,
    object: "response",
    created_at: 1791572975,
    completed_at: null,
    status,
    background: true,
    store: true,
    // While queued or running, `model` holds the preset name (providers/perplexity/WIRE.md §3, P6).
    model: "medium",
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    max_tool_calls: null,
    metadata: {},
    previous_response_id: null,
    output: [],
    usage: null,
    ...extra,
  };
}

export function agentTranscript(
  options: { seed?: number; deltas?: number; rounds?: number } = {},
): Transcript {
  const random = prng(options.seed ?? 11);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const events: Record<string, unknown>[] = [];
  const push = (event: Record<string, unknown>) => {
    const { type, ...rest } = event;
    events.push({ type, sequence_number: events.length, ...rest });
  };
  const output: Record<string, unknown>[] = [];
  const resultIds: number[] = [];

  push({ type: "response.created", response: snapshot("queued") });
  push({ type: "response.in_progress", response: snapshot("in_progress") });
  push({ type: "response.reasoning.started", thought: "Planning the searches. " });
  const rounds = options.rounds ?? 3;
  for (let round = 0; round < rounds; round++) {
    const queries = [`${pick(words)} ${pick(words)} pricing ${round}`];
    push({ type: "response.reasoning.search_queries", queries, thought: `Searching, round ${round}. ` });
    const results = Array.from({ length: 4 }, (_, i) => {
      const id = round * 20 + i + 1;
      resultIds.push(id);
      return {
        id,
        url: `https://vendor${round}.example.com/pricing/${i}`,
        title: `Vendor ${round} pricing ${i} — ${pick(words)}`,
        snippet: `${pick(words)} ${pick(words)} ${pick(words)}`,
        source: "web",
        ...(i % 2 === 0 && { last_updated: "2026-10-02" }),
      };
    });
    push({ type: "response.reasoning.search_results", results });
    output.push({ type: "search_results", queries, results });
  }
  const pages = [
    { url: "https://vendor0.example.com/pricing/0", title: "Vendor 0 pricing", snippet: "Starts at $45 /mo" },
  ];
  push({ type: "response.reasoning.fetch_url_queries", urls: pages.map((p) => p.url) });
  push({ type: "response.reasoning.fetch_url_results", contents: pages });
  output.push({ type: "fetch_url_results", contents: pages });
  push({ type: "response.reasoning.stopped", thought: "Writing the comparison. " });

  const pieces: string[] = [];
  const totalDeltas = options.deltas ?? 600;
  while (pieces.length < totalDeltas * 2.5) {
    pieces.push(`${pick(words)} `);
    if (random() < 0.04) pieces.push(`[web:${pick(resultIds)}] `);
    if (random() < 0.01) pieces.push("\n\n");
  }
  const report = pieces.join("");
  const chars = Array.from(report);
  const messageIndex = output.length;
  const msgId = "msg_5eed5eed-0000-4000-8000-5eed5eed5eed";
  const text = { item_id: msgId, output_index: messageIndex, content_index: 0 };
  push({
    type: "response.output_item.added",
    output_index: messageIndex,
    item: { type: "message", id: msgId, status: "in_progress", role: "assistant", content: [] },
  });
  const approximate = Math.max(1, Math.round(chars.length / totalDeltas));
  // Deltas cut anywhere, markers included: "[we" + "b:21]" arrives in two events.
  for (let position = 0; position < chars.length; ) {
    const size = Math.max(1, Math.min(chars.length - position, approximate + Math.floor(random() * 3) - 1));
    push({
      type: "response.output_text.delta",
      ...text,
      delta: chars.slice(position, position + size).join(""),
    });
    position += size;
  }
  push({ type: "response.output_text.done", ...text, text: report });
  const message = {
    type: "message",
    id: msgId,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: report, annotations: [] }],
  };
  push({ type: "response.output_item.done", output_index: messageIndex, item: message });
  output.push(message);
  const final = snapshot("completed", {
    completed_at: 1791573155,
    model: "openai/gpt-6-luna",
    output,
    usage: {
      input_tokens: 24463,
      output_tokens: 5120,
      total_tokens: 29583,
      output_tokens_details: { reasoning_tokens: 1200 },
      tool_calls_details: { search_web: { invocation: rounds }, fetch_url: { invocation: pages.length } },
      cost: {
        currency: "USD",
        input_cost: 0.0021,
        output_cost: 0.00256,
        tool_calls_cost: 0.008,
        total_cost: 0.01266,
      },
    },
  });
  push({ type: "response.completed", response: final });

  return {
    // Bare `data:` lines, no `event:` line (providers/perplexity/WIRE.md §4).
    ...frame(events, (event) => sseEvent(event)),
    final,
    running: snapshot("in_progress", { output: output.slice(0, 2) }),
    report,
  };
}
