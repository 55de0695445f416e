/**
 * `sonde` command line: research, attach, status, cancel, models, replay.
 * Progress goes to stderr, the report (Markdown) or events (`--json`) to stdout.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ResultAggregator } from "../aggregate.js";
import { Sonde } from "../client.js";
import { JobAbortedError, SondeError } from "../errors.js";
import { ProviderName, ResearchEvent } from "../events.js";
import type { ResearchJob } from "../job.js";
import { describeModel, Progress, renderEstimate, renderSources } from "./render.js";

const usage = `Usage:
  sonde research "<query>" --model <provider:model> [--json] [--record <file>] [--detach] [--timeout <ms>]
                   [--max-cost <usd>]   stop the job when its running cost passes this many dollars
  sonde attach <ref.json> [--json] [--record <file>] [--max-cost <usd>]
  sonde status <ref.json>
  sonde cancel <ref.json>
  sonde models [--provider <name>] [--json]
  sonde replay <events.jsonl>

Keys come from the environment (OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY,
PERPLEXITY_API_KEY, SONDE_HOSTED_API_KEY). Try it with no key:
  sonde research "How do research agents verify citations?" --model portable:demo/offline
`;

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  isTTY: boolean;
}

class UsageError extends Error {}

function maxCostOf(flag: string | undefined): number | undefined {
  if (flag === undefined) return undefined;
  const value = Number(flag);
  if (!(Number.isFinite(value) && value > 0))
    throw new UsageError(`--max-cost takes a positive number of US dollars, e.g. 2.50, not "${flag}"`);
  return value;
}

function readRef(path: string | undefined): unknown {
  if (!path) throw new UsageError("missing <ref.json>");
  // The text itself: Sonde checks a ref's size before parsing it.
  return path === "-" ? readFileSync(0, "utf8") : readFileSync(path, "utf8");
}

async function stream(job: ResearchJob, io: Io, flags: { json?: boolean; record?: string }): Promise<number> {
  const progress = new Progress();
  let lastLine = "";
  let refWritten = false;
  const record = flags.record;
  if (record) writeFileSync(record, "");
  try {
    for await (const event of job) {
      if (record) {
        appendFileSync(record, `${JSON.stringify(event)}\n`);
        if (!refWritten && job.id) {
          writeFileSync(`${record}.ref.json`, `${JSON.stringify(job.toRef(), null, 2)}\n`);
          refWritten = true;
        }
      }
      if (flags.json) {
        io.stdout(`${JSON.stringify(event)}\n`);
        continue;
      }
      if (event.type === "text") io.stdout(event.delta);
      if (event.type === "created") io.stderr(`job ${event.jobId} (${event.model})\n`);
      if (event.type === "error") io.stderr(`\nerror ${event.error.code}: ${event.error.message}\n`);
      if (progress.update(event)) {
        const line = progress.line();
        // Rewrite one line on a terminal; in a log, write only lines that say something new.
        if (io.isTTY) io.stderr(`\r\x1b[2K${line}`);
        else if (line !== lastLine) io.stderr(`${line}\n`);
        lastLine = line;
      }
    }
  } catch (error) {
    // Our connection stopped (timeout, abort), not the job: without its ref it could not be attached.
    if (JobAbortedError.isInstance(error) && job.id) {
      io.stderr(
        `\nThe job keeps running on the provider. Save this ref as ref.json, then \`sonde attach ref.json\` (or \`sonde cancel ref.json\`):\n${JSON.stringify(job.toRef(), null, 2)}\n`,
      );
    }
    throw error;
  }
  if (io.isTTY && !flags.json) io.stderr("\n");
  const result = await job
    .result()
    .catch((error: SondeError & { partial?: Parameters<typeof renderSources>[0] }) => {
      if (!flags.json && error.partial) io.stdout(`\n${renderSources(error.partial)}`);
      throw error;
    });
  if (!flags.json) io.stdout(`\n${renderSources(result)}`);
  return result.status === "completed" ? 0 : 1;
}

export async function run(argv: string[], io: Io, client = new Sonde()): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: "string", short: "m" },
      json: { type: "boolean" },
      record: { type: "string" },
      detach: { type: "boolean" },
      timeout: { type: "string" },
      "max-cost": { type: "string" },
      provider: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, argument] = positionals;
  if (values.help || !command) {
    io.stdout(usage);
    return command || values.help ? 0 : 2;
  }
  switch (command) {
    case "research": {
      if (!argument) throw new UsageError('missing "<query>"');
      if (!values.model) throw new UsageError("missing --model <provider:model> (see `sonde models`)");
      const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
      if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0))
        throw new UsageError(
          `--timeout takes milliseconds as a positive whole number, not "${values.timeout}"`,
        );
      const maxCostUSD = maxCostOf(values["max-cost"]);
      // The cap is enforced by the process that follows the job; a detached job has none.
      if (maxCostUSD !== undefined && values.detach)
        throw new UsageError(
          "--max-cost needs this process to follow the job, so it cannot go with --detach; pass --max-cost to `sonde attach` instead",
        );
      const request = {
        model: values.model,
        query: argument,
        ...(timeoutMs && { timeoutMs }),
        ...(maxCostUSD !== undefined && { budget: { maxCostUSD } }),
      };
      io.stderr(renderEstimate(client.research.estimate(request)));
      const job = client.research.start(request);
      if (values.detach) {
        for await (const event of job) if (event.type === "created") break;
        io.stdout(`${JSON.stringify(job.toRef(), null, 2)}\n`);
        io.stderr("Detached: the job keeps running. Re-attach with `sonde attach <ref.json>`.\n");
        return 0;
      }
      return stream(job, io, values);
    }
    case "attach": {
      const maxCostUSD = maxCostOf(values["max-cost"]);
      const options = maxCostUSD !== undefined ? { maxCostUSD } : {};
      return stream(client.research.attach(readRef(argument), options), io, values);
    }
    case "status": {
      const snapshot = await client.research.get(readRef(argument));
      io.stdout(`${JSON.stringify(snapshot, null, 2)}\n`);
      return 0;
    }
    case "cancel": {
      const outcome = await client.research.cancel(readRef(argument));
      io.stdout(`${JSON.stringify(outcome, null, 2)}\n`);
      return outcome.outcome === "cancelled" || outcome.outcome === "already-terminal" ? 0 : 1;
    }
    case "models": {
      const provider = values.provider === undefined ? undefined : ProviderName.safeParse(values.provider);
      if (provider && !provider.success) throw new UsageError(`unknown provider "${values.provider}"`);
      const models = client.research.listModels(provider ? { provider: provider.data } : {});
      if (values.json) {
        io.stdout(`${JSON.stringify(models, null, 2)}\n`);
        return 0;
      }
      const now = new Date();
      for (const m of models) io.stdout(`${describeModel(m, now)}\n`);
      return 0;
    }
    case "replay": {
      if (!argument) throw new UsageError("missing <events.jsonl>");
      const aggregator = new ResultAggregator();
      for (const line of readFileSync(argument, "utf8").split("\n")) {
        if (!line.trim()) continue;
        const event = ResearchEvent.parse(JSON.parse(line));
        aggregator.add(event);
      }
      const result = aggregator.result();
      io.stdout(`${result.report}\n${renderSources(result)}`);
      io.stderr(
        `replayed: status ${result.status}, ${result.citations.length} sources, $${result.usage.costUSD}\n`,
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * A reader that stops early (`sonde research … --json | head`) closes the pipe: that ends the
 * output, it is not a crash. Any other stream error stays fatal.
 */
function exitOnBrokenPipe(error: NodeJS.ErrnoException): void {
  if (error.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
}

async function main(): Promise<void> {
  process.stdout.on("error", exitOnBrokenPipe);
  process.stderr.on("error", exitOnBrokenPipe);
  const io: Io = {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTTY: Boolean(process.stderr.isTTY),
  };
  try {
    process.exitCode = await run(process.argv.slice(2), io);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`sonde: ${(error as Error).message}\n\n${usage}`);
      process.exitCode = 2;
    } else if (SondeError.isInstance(error)) {
      io.stderr(`sonde: ${error.name} (${error.code}): ${error.message}\n`);
      process.exitCode = 1;
    } else {
      io.stderr(`sonde: ${(error as Error).message ?? String(error)}\n`);
      process.exitCode = 1;
    }
  }
}

// Run when executed as the `sonde` binary, not when imported by tests.
if (process.argv[1] && /(?:^|[\\/])(?:cli|main)\.(?:c?js|ts)$|[\\/]sonde$/.test(process.argv[1])) void main();
