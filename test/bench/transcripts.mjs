/**
 * Long streaming transcripts for the side-by-side bench, in each engine's wire format
 * (providers/<name>/WIRE.md, as the fixtures in test/fixtures/ have them): lifecycle events,
 * then `deltas` text deltas mixing ASCII, accents, CJK and emoji, then the terminal event.
 * Plain JavaScript so that fresh benchmark processes run them without a compiler.
 */

const words = [
  "battery",
  "regulation",
  "due",
  "diligence",
  "the",
  "of",
  "and",
  "2027",
  "Brüssel",
  "電池",
  "évaluation",
  "🔋",
];

/** Deterministic delta text: a word and a space, sometimes two. */
export function deltaText(i) {
  const word = words[(i * 7) % words.length];
  return i % 5 === 0 ? `${word} ${words[i % words.length]} ` : `${word} `;
}

function sse(event, data) {
  return `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
}

function openai(deltas) {
  const id = "resp_bench0000000000000000000000000000";
  const base = { id, object: "response", model: "o3-deep-research", background: true };
  const parts = [];
  let seq = 0;
  parts.push(
    sse("response.created", {
      type: "response.created",
      sequence_number: seq++,
      response: { ...base, status: "queued", output: [] },
    }),
  );
  parts.push(
    sse("response.in_progress", {
      type: "response.in_progress",
      sequence_number: seq++,
      response: { ...base, status: "in_progress", output: [] },
    }),
  );
  const item = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] };
  parts.push(
    sse("response.output_item.added", {
      type: "response.output_item.added",
      sequence_number: seq++,
      output_index: 0,
      item,
    }),
  );
  parts.push(
    sse("response.content_part.added", {
      type: "response.content_part.added",
      sequence_number: seq++,
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    }),
  );
  let report = "";
  for (let i = 0; i < deltas; i++) {
    const delta = deltaText(i);
    report += delta;
    parts.push(
      sse("response.output_text.delta", {
        type: "response.output_text.delta",
        sequence_number: seq++,
        item_id: "msg_1",
        output_index: 0,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    );
  }
  parts.push(
    sse("response.output_text.done", {
      type: "response.output_text.done",
      sequence_number: seq++,
      item_id: "msg_1",
      output_index: 0,
      content_index: 0,
      text: report,
      logprobs: [],
    }),
  );
  const done = {
    ...item,
    status: "completed",
    content: [{ type: "output_text", text: report, annotations: [] }],
  };
  parts.push(
    sse("response.output_item.done", {
      type: "response.output_item.done",
      sequence_number: seq++,
      output_index: 0,
      item: done,
    }),
  );
  const usage = {
    input_tokens: 1200,
    output_tokens: deltas * 2,
    output_tokens_details: { reasoning_tokens: deltas },
    total_tokens: 1200 + deltas * 2,
  };
  parts.push(
    sse("response.completed", {
      type: "response.completed",
      sequence_number: seq++,
      response: { ...base, status: "completed", output: [done], usage },
    }),
  );
  return { body: parts.join(""), report };
}

function gemini(deltas) {
  const id = "v1_BenchInteraction0000000000000000";
  const parts = [];
  parts.push(
    sse("interaction.created", {
      interaction: {
        id,
        status: "in_progress",
        object: "interaction",
        agent: "deep-research-preview-04-2026",
      },
      event_type: "interaction.created",
    }),
  );
  parts.push(
    sse("interaction.status_update", {
      interaction_id: id,
      status: "in_progress",
      event_type: "interaction.status_update",
    }),
  );
  let n = 1;
  const eventId = () => `ev_${String(n++).padStart(7, "0")}`;
  parts.push(
    sse("step.start", {
      index: 0,
      step: { type: "model_output" },
      event_id: eventId(),
      event_type: "step.start",
    }),
  );
  let report = "";
  for (let i = 0; i < deltas; i++) {
    const text = deltaText(i);
    report += text;
    parts.push(
      sse("step.delta", {
        index: 0,
        delta: { text, type: "text" },
        event_id: eventId(),
        event_type: "step.delta",
      }),
    );
  }
  parts.push(sse("step.stop", { index: 0, event_id: eventId(), event_type: "step.stop" }));
  const usage = {
    total_tokens: 1200 + deltas * 2,
    total_input_tokens: 1200,
    total_output_tokens: deltas * 2,
  };
  parts.push(
    sse("interaction.completed", {
      interaction: {
        id,
        status: "completed",
        usage,
        object: "interaction",
        agent: "deep-research-preview-04-2026",
      },
      event_id: eventId(),
      event_type: "interaction.completed",
    }),
  );
  parts.push("data: [DONE]\n\n");
  return { body: parts.join(""), report };
}

/**
 * Perplexity's Agent API (providers/perplexity/WIRE.md §4): the Responses stream with bare
 * `data:` lines, one round of search results, then text deltas citing them inline as
 * `[web:N]` (one marker every tenth delta, some split across two deltas).
 */
function perplexityAgent(deltas) {
  const id = "resp_5eed0000-7c0f-4fee-9a11-0000000000bb";
  const base = { id, object: "response", model: "medium", background: true };
  const parts = [];
  let seq = 0;
  const push = (data) => parts.push(sse(undefined, { ...data, sequence_number: seq++ }));
  push({ type: "response.created", response: { ...base, status: "queued", output: [] } });
  push({ type: "response.in_progress", response: { ...base, status: "in_progress", output: [] } });
  const results = Array.from({ length: 20 }, (_, i) => ({
    id: i + 1,
    url: `https://example.org/source-${i + 1}`,
    title: `Source ${i + 1}`,
    snippet: "a snippet",
    source: "web",
  }));
  push({
    type: "response.reasoning.search_queries",
    queries: ["battery regulation"],
    thought: "Searching. ",
  });
  push({ type: "response.reasoning.search_results", results });
  const searches = { type: "search_results", queries: ["battery regulation"], results };
  const text = { item_id: "msg_1", output_index: 1, content_index: 0 };
  const item = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] };
  push({ type: "response.output_item.added", output_index: 1, item });
  let report = "";
  for (let i = 0; i < deltas; i++) {
    const marker = i % 10 === 0 ? `[web:${((i / 10) % 20) + 1}]` : "";
    // Every other marker is cut in two: "[we" ends this delta, "b:N]" starts the next.
    const delta =
      i % 20 === 0
        ? `${deltaText(i)}${marker.slice(0, 3)}`
        : i % 20 === 1
          ? `${"b:" + ((((i - 1) / 10) % 20) + 1) + "]"}${deltaText(i)}`
          : `${deltaText(i)}${marker}`;
    report += delta;
    push({ type: "response.output_text.delta", ...text, delta });
  }
  push({ type: "response.output_text.done", ...text, text: report });
  const done = {
    ...item,
    status: "completed",
    content: [{ type: "output_text", text: report, annotations: [] }],
  };
  push({ type: "response.output_item.done", output_index: 1, item: done });
  const usage = {
    input_tokens: 1200,
    output_tokens: deltas * 2,
    total_tokens: 1200 + deltas * 2,
    cost: { currency: "USD", input_cost: 0.0021, output_cost: 0.5, total_cost: 0.5021 },
  };
  push({
    type: "response.completed",
    response: { ...base, status: "completed", output: [searches, done], usage },
  });
  return { body: parts.join(""), report };
}

function openrouter(deltas) {
  const head = {
    id: "gen-1767000000-BenchBenchBenchBench",
    provider: "OpenAI",
    model: "openai/o4-mini-deep-research",
    object: "chat.completion.chunk",
    created: 1767000000,
  };
  const chunk = (delta, extra = {}) =>
    sse(undefined, {
      ...head,
      choices: [
        {
          index: 0,
          delta: { role: "assistant", ...delta },
          finish_reason: null,
          native_finish_reason: null,
          logprobs: null,
        },
      ],
      ...extra,
    });
  const parts = [": OPENROUTER PROCESSING\n\n"];
  let report = "";
  for (let i = 0; i < deltas; i++) {
    const content = deltaText(i);
    report += content;
    parts.push(chunk({ content }));
  }
  parts.push(
    sse(undefined, {
      ...head,
      choices: [
        {
          index: 0,
          delta: { role: "assistant", content: "" },
          finish_reason: "stop",
          native_finish_reason: "stop",
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: deltas * 2,
        total_tokens: 1200 + deltas * 2,
        cost: 0.5,
      },
    }),
  );
  parts.push("data: [DONE]\n\n");
  return { body: parts.join(""), report };
}

/**
 * OpenRouter carrying Perplexity's citations: every annotation at 0/0 on the first content
 * chunk, `[n]` markers inline (providers/openrouter/WIRE.md §4). `citations: false` is the same text
 * with the markers' characters but no sources.
 */
function perplexityViaOpenRouter(deltas, citations) {
  const head = {
    id: "gen-1767000000-BenchPerplexityBench",
    provider: "Perplexity",
    model: "perplexity/sonar-deep-research",
    object: "chat.completion.chunk",
    created: 1767000000,
  };
  const sources = 20;
  const parts = [": OPENROUTER PROCESSING\n\n"];
  let report = "";
  for (let i = 0; i < deltas; i++) {
    const marker = i % 10 === 0 ? `[${(i / 10) % (sources + 5)}]` : "";
    const content = `${deltaText(i)}${citations ? marker : marker.replace(/./g, "x")}`;
    report += content;
    const annotations =
      citations && i === 0
        ? Array.from({ length: sources }, (_, s) => ({
            type: "url_citation",
            url_citation: {
              start_index: 0,
              end_index: 0,
              title: `example.org/source-${s}`,
              url: `https://example.org/source-${s}`,
            },
          }))
        : undefined;
    parts.push(
      sse(undefined, {
        ...head,
        choices: [
          {
            index: 0,
            delta: { role: "assistant", content, ...(annotations && { annotations }) },
            finish_reason: null,
          },
        ],
      }),
    );
  }
  parts.push(
    sse(undefined, {
      ...head,
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 21, completion_tokens: deltas, total_tokens: deltas + 21, cost: 0.41 },
    }),
  );
  parts.push("data: [DONE]\n\n");
  return { body: parts.join(""), report };
}

export const engines = {
  openai: {
    model: "openai:o3-deep-research",
    path: "/v1/responses",
    settings: (url) => ({ openai: { apiKey: "sk-bench-0000", baseURL: `${url}/v1` } }),
    transcript: openai,
  },
  gemini: {
    model: "gemini:deep-research-preview-04-2026",
    path: "/v1beta/interactions",
    settings: (url) => ({ gemini: { apiKey: "AIzaBench0000", baseURL: `${url}/v1beta` } }),
    transcript: gemini,
  },
  perplexity: {
    model: "perplexity:medium",
    path: "/v1/agent",
    settings: (url) => ({ perplexity: { apiKey: "pplx-bench-0000", baseURL: url } }),
    transcript: perplexityAgent,
  },
  openrouter: {
    model: "openrouter:openai/o4-mini-deep-research",
    path: "/api/v1/chat/completions",
    settings: (url) => ({ openrouter: { apiKey: "sk-or-v1-bench", baseURL: `${url}/api/v1` } }),
    transcript: openrouter,
  },
  "perplexity-citations": {
    model: "openrouter:perplexity/sonar-deep-research",
    path: "/api/v1/chat/completions",
    settings: (url) => ({ openrouter: { apiKey: "sk-or-v1-bench", baseURL: `${url}/api/v1` } }),
    transcript: (n) => perplexityViaOpenRouter(n, true),
  },
  "perplexity-plain": {
    model: "openrouter:perplexity/sonar-deep-research",
    path: "/api/v1/chat/completions",
    settings: (url) => ({ openrouter: { apiKey: "sk-or-v1-bench", baseURL: `${url}/api/v1` } }),
    transcript: (n) => perplexityViaOpenRouter(n, false),
  },
};

/** What the floor takes from one parsed payload: the text delta, if any. */
export function floorDelta(engine, data) {
  if (engine === "openai" || engine === "perplexity")
    return data.type === "response.output_text.delta" ? data.delta : undefined;
  if (engine === "gemini") return data.event_type === "step.delta" ? data.delta?.text : undefined;
  return data.choices?.[0]?.delta?.content;
}
