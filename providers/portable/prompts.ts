/**
 * The prompts of the loop and the parsing of what comes back. Every prompt asks for one
 * JSON object; its user message carries a JSON input block (after `Input (JSON):`) and,
 * for extraction, the source texts verbatim in `<source>` blocks (not JSON-escaped, so
 * quotations can be copied character for character).
 */
import type { z } from "zod";
import { UNCOMPILED } from "../../src/transport/fast-json.js";
import type { Source } from "./corpus.js";
import type { ChatMessage, StoredRequest } from "./types.js";
import { CheckOutput, ExtractOutput, PlanOutput, WriteOutput } from "./wire/model-output.js";

export const INPUT_MARKER = "Input (JSON):";

export type Task = "plan" | "extract" | "check" | "write";

export interface PromptFinding {
  id: string;
  source: string;
  title?: string | undefined;
  url: string;
  claim: string;
  quote: string;
}

function context(request: StoredRequest) {
  return {
    question: request.query,
    ...(request.instructions && { instructions: request.instructions }),
    ...(request.asOf && { asOf: request.asOf }),
  };
}

const today = (request: StoredRequest) =>
  request.asOf ? ` Treat ${request.asOf} as today's date: prefer evidence current as of then.` : "";

const jsonOnly = "Reply with one JSON object and nothing else (no Markdown fence, no commentary).";

function user(input: Record<string, unknown>, extra = ""): ChatMessage {
  return { role: "user", content: `${INPUT_MARKER}\n${JSON.stringify(input, null, 2)}${extra}` };
}

export function planPrompt(request: StoredRequest, maxQueries: number): ChatMessage[] {
  return [
    {
      role: "system",
      content:
        "You plan web research for a question. Choose distinct web search queries that together cover it: " +
        `at most ${maxQueries}, each under 12 words and understandable on its own.${today(request)} ` +
        `${jsonOnly} Shape: {"queries": ["…", "…"]}`,
    },
    user({ task: "plan", ...context(request), maxQueries }),
  ];
}

export function extractPrompt(request: StoredRequest, sources: Source[], maxFindings: number): ChatMessage[] {
  const blocks = sources
    .map(
      (s) =>
        `\n\n<source id="${s.id}"${s.title ? ` title="${s.title.replace(/"/g, "'")}"` : ""} url="${s.url}">\n${s.text}\n</source>`,
    )
    .join("");
  return [
    {
      role: "system",
      content:
        "You extract evidence from sources to answer a question. For each relevant passage give the source id, " +
        "a one-sentence claim in your own words, and a quotation that supports the claim. The quotation must be " +
        "copied exactly from that source's text: one contiguous passage of at least 8 words, same words, same " +
        "punctuation, nothing added, nothing skipped. Never paraphrase inside a quotation. Prefer passages with " +
        `concrete facts (numbers, dates, names). At most ${maxFindings} findings; skip sources with nothing relevant.` +
        `${today(request)} ${jsonOnly} Shape: {"findings": [{"source": "S1", "claim": "…", "quote": "…"}]}`,
    },
    user(
      {
        task: "extract",
        ...context(request),
        maxFindings,
        sources: sources.map(({ id, title, url }) => ({ id, title, url })),
      },
      blocks,
    ),
  ];
}

export function checkPrompt(request: StoredRequest, findings: PromptFinding[]): ChatMessage[] {
  return [
    {
      role: "system",
      content:
        "You check evidence. For each finding, read the quotation on its own and decide whether it supports the " +
        'claim ("supported"), contradicts it ("contradicted"), or neither ("unsupported", e.g. the claim says more ' +
        `than the quotation). Judge only from the quotation. ${jsonOnly} Shape: {"checks": [{"id": "F1", ` +
        '"verdict": "supported", "reason": "…"}]} with one entry per finding.',
    },
    user({
      task: "check",
      ...context(request),
      findings: findings.map(({ id, claim, quote }) => ({ id, claim, quote })),
    }),
  ];
}

export function writePrompt(request: StoredRequest, findings: PromptFinding[]): ChatMessage[] {
  return [
    {
      role: "system",
      content:
        "You write a research report that answers the question from verified findings only. Every sentence that " +
        "states a fact ends with the ids of the findings that support it in square brackets, before the period or " +
        'after it, e.g. "Adoption doubled in 2024 [F2][F5]." Use only facts from the findings; where they do not ' +
        "answer part of the question, say so plainly (without brackets). Copy numbers as the findings give them. " +
        "If you compute a new number (a difference, ratio or growth rate), write a placeholder such as {N1} in the " +
        'text and declare it in "derived": {"id": "N1", "formula": "(a - b) / b * 100", "inputs": {"a": ' +
        '{"finding": "F1", "value": 120, "unit": "million", "date": "2024"}, "b": {"finding": "F2", "value": 100, ' +
        '"unit": "million", "date": "2023"}}, "result": 20, "unit": "%"}. Each input value, unit and date must be ' +
        "written in that finding's quote; formulas use + - * / and parentheses only; state the result with the " +
        `precision you mean.${today(request)}${request.output ? ` Form of the report: ${request.output}.` : ""} ` +
        `${jsonOnly} Shape: {"title": "…", "sections": [{"heading": "…", "paragraphs": ["…"]}], "derived": []}`,
    },
    user({
      task: "write",
      ...context(request),
      ...(request.output && { output: request.output }),
      findings: findings.map(({ id, claim, quote, title, url }) => ({ id, claim, quote, title, url })),
    }),
  ];
}

/** The correction appended before the single retry of a malformed answer. */
export function retryMessages(messages: ChatMessage[], previous: string, problem: string): ChatMessage[] {
  return [
    ...messages,
    { role: "assistant", content: previous.slice(0, 4_000) },
    {
      role: "user",
      content: `That reply could not be used (${problem}). Answer again with only the JSON object in the requested shape.`,
    },
  ];
}

const schemas = { plan: PlanOutput, extract: ExtractOutput, check: CheckOutput, write: WriteOutput } as const;
export type TaskOutput<T extends Task> = z.infer<(typeof schemas)[T]>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Parses a model's answer: tolerates a Markdown fence or text around one JSON object. */
export function parseOutput<T extends Task>(task: T, content: string): Parsed<TaskOutput<T>> {
  const trimmed = content
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/```\s*$/, "");
  const start = trimmed.indexOf("{");
  const end = trimmed.lastIndexOf("}");
  if (start < 0 || end <= start) return { ok: false, problem: "no JSON object in the reply" };
  let value: unknown;
  try {
    value = JSON.parse(trimmed.slice(start, end + 1));
  } catch (error) {
    return { ok: false, problem: `invalid JSON: ${(error as Error).message}` };
  }
  const parsed = schemas[task].safeParse(value, UNCOMPILED);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      problem: `unexpected shape at ${issue?.path.join(".") || "root"}: ${issue?.message}`,
    };
  }
  return { ok: true, value: parsed.data as TaskOutput<T> };
}

/** Reads a prompt back (the demo model and the test endpoints answer from it). */
export function readPrompt(messages: ChatMessage[]): {
  input: Record<string, unknown> & { task?: Task };
  sources: Map<string, string>;
} {
  const content =
    [...messages].reverse().find((m) => m.role === "user" && m.content.startsWith(INPUT_MARKER))?.content ??
    "";
  const body = content.slice(INPUT_MARKER.length);
  const blockStart = body.indexOf("\n\n<source ");
  const json = blockStart >= 0 ? body.slice(0, blockStart) : body;
  let input: Record<string, unknown> = {};
  try {
    input = JSON.parse(json) as Record<string, unknown>;
  } catch {
    // Not a loop prompt.
  }
  const sources = new Map<string, string>();
  for (const match of body.matchAll(/<source id="([^"]+)"[^>]*>\n([\s\S]*?)\n<\/source>/g)) {
    sources.set(match[1]!, match[2]!);
  }
  return { input, sources };
}
