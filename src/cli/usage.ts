/** The CLI's help texts (overall and per command) and its version. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** A mistake in the command line: reported with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

const portableFlags = `Portable engine (portable:<chat>/<model>):
  --chat-url <url>      OpenAI-compatible chat endpoint for <chat>   env SONDE_CHAT_BASE_URL
                        (its key, if any: env SONDE_CHAT_API_KEY)
  --search <name>       tavily | brave | searxng                     env SONDE_SEARCH_PROVIDER
  --search-url <url>    search backend base URL (searxng needs one)  env SONDE_SEARCH_BASE_URL
                        (key: env TAVILY_API_KEY, BRAVE_API_KEY or SONDE_SEARCH_API_KEY)
  --store <dir>         job store directory                          env SONDE_STORE_DIR`;

export const commandUsage: Record<string, string> = {
  research: `Usage: sonde research "<query>" --model <provider:model> [options]

Starts a research job and streams it: the report (Markdown) to stdout, progress to stderr.
  --model, -m <id>      model id (see \`sonde models\`)
  --json                one event per line on stdout instead of the report
  --record <file>       save every event to <file> and the ref to <file>.ref.json as they
                        arrive; \`sonde attach <file>.ref.json\` continues after the last one
  --detach              print the ref once the job exists and leave it running
  --timeout <ms>        local deadline for following the job
  --max-cost <usd>      stop the job when its running cost passes this many dollars

${portableFlags}
`,
  attach: `Usage: sonde attach <ref.json> [--json] [--record <file>] [--max-cost <usd>]

Follows a job from its ref (printed by --detach, or <file>.ref.json from --record <file>),
delivering only the events after the ref. Takes the portable flags of \`sonde research\`.
`,
  status: "Usage: sonde status <ref.json>\n\nPrints the job's current status (one read, no stream).\n",
  cancel:
    "Usage: sonde cancel <ref.json>\n\nCancels the job where its engine can, and prints the honest outcome.\n",
  models: "Usage: sonde models [--provider <name>] [--json]\n\nLists the catalog: ids, lifecycle, prices.\n",
  replay:
    "Usage: sonde replay <events.jsonl>\n\nRebuilds the report from a recording (--record or --json output), offline.\n",
};

export const usage = `Usage:
  sonde research "<query>" --model <provider:model> [--json] [--record <file>] [--detach] [--timeout <ms>]
                   [--max-cost <usd>]   stop the job when its running cost passes this many dollars
  sonde attach <ref.json> [--json] [--record <file>] [--max-cost <usd>]
  sonde status <ref.json>
  sonde cancel <ref.json>
  sonde models [--provider <name>] [--json]
  sonde replay <events.jsonl>
  sonde <command> --help | sonde --version

Keys come from the environment (OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY,
PERPLEXITY_API_KEY, SONDE_HOSTED_API_KEY). Try it with no key:
  sonde research "How do research agents verify citations?" --model portable:demo/offline
`;

/** The package's version, from the package.json above this file (in src/ or dist/). */
export function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "sonde" && pkg.version) return pkg.version;
  }
  return "unknown";
}
