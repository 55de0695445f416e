/**
 * `sonde` command line: research, attach, status, cancel, models, replay.
 * Progress goes to stderr, the report (Markdown) or events (`--json`) to stdout.
 */
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ResultAggregator } from "../aggregate.js";
import { AuthenticationError, JobAbortedError, SondeError } from "../errors.js";
import { ResearchEvent } from "../event-schemas.js";
import { ProviderName } from "../events.js";
import type { ResearchJob } from "../job.js";
import type { JobRef } from "../ref.js";
import { Sonde } from "../sonde.js";
import { dollars } from "../spend.js";
import { UNCOMPILED } from "../transport/fast-json.js";
import { describeIssues } from "../validate.js";
import { portableSettings } from "./portable-options.js";
import { Recorder } from "./record.js";
import { readRefFile } from "./ref-file.js";
import { describeModel, Progress, renderEstimate, renderSources } from "./render.js";
import { commandUsage, UsageError, usage, version } from "./usage.js";

interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  isTTY: boolean;
  /** Where keys and portable settings come from. @defaultValue process.env */
  env?: Record<string, string | undefined>;
}

function maxCostOf(flag: string | undefined, command: string): number | undefined {
  if (flag === undefined) return undefined;
  const value = Number(flag);
  if (!(Number.isFinite(value) && value > 0))
    throw new UsageError(
      `--max-cost takes a positive number of US dollars, e.g. 2.50, not "${flag}"`,
      command,
    );
  return value;
}

/**
 * Progress starts from where the attached job stands: the events recorded beside a
 * `--record` ref, else one status read. (Attach delivers only the events after the ref.)
 */
async function seedProgress(progress: Progress, refPath: string | undefined, ref: JobRef, client: Sonde) {
  const recording = refPath?.endsWith(".ref.json") ? refPath.slice(0, -".ref.json".length) : undefined;
  if (recording && existsSync(recording)) {
    for (const line of readFileSync(recording, "utf8").split("\n")) {
      const event = line.trim() ? ResearchEvent.safeParse(JSON.parse(line), UNCOMPILED) : undefined;
      if (event?.success) progress.update(event.data);
    }
    return;
  }
  const snapshot = await client.research.get(ref).catch(() => undefined);
  if (snapshot) progress.update({ type: "status", status: snapshot.status, seq: 0 });
  if (snapshot?.usage) progress.update({ type: "usage", usage: snapshot.usage, seq: 0 });
}

async function stream(
  job: ResearchJob,
  io: Io,
  flags: { json?: boolean; record?: string },
  progress = new Progress(),
): Promise<number> {
  let lastLine = "";
  const recorder = flags.record ? new Recorder(flags.record) : undefined;
  // ^C stops following, not the job: the abort is caught below, which prints the ref (a
  // remote job runs on and bills). `once`: a second ^C is Node's again and exits at once.
  const interrupt = () => job.abort("interrupted (^C)");
  process.once("SIGINT", interrupt);
  try {
    for await (const event of job) {
      recorder?.add(event, job);
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
      // A local job pauses (saved) so this process can exit; a remote one runs on.
      await job.detach();
      const where =
        job.toRef().provider === "portable"
          ? "The local job is paused with its progress saved."
          : "The job keeps running on the provider.";
      io.stderr(
        `\n${where} Save this ref as ref.json, then \`sonde attach ref.json\` (or \`sonde cancel ref.json\`):\n${JSON.stringify(job.toRef(), null, 2)}\n`,
      );
    }
    throw error;
  } finally {
    process.off("SIGINT", interrupt);
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

const parseFlags = (argv: string[]) =>
  parseArgs({
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
      "chat-url": { type: "string" },
      search: { type: "string" },
      "search-url": { type: "string" },
      store: { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "v" },
    },
  });
type Flags = ReturnType<typeof parseFlags>["values"];

export async function run(argv: string[], io: Io, given?: Sonde): Promise<number> {
  const { values, positionals } = parseFlags(argv);
  const [command, argument] = positionals;
  if (values.version) {
    io.stdout(`${version()}\n`);
    return 0;
  }
  if (values.help || !command) {
    io.stdout((command && commandUsage[command]) || usage);
    return command || values.help ? 0 : 2;
  }
  const env = io.env ?? process.env;
  const refArgument = ["attach", "status", "cancel"].includes(command) ? readRefFile(argument) : undefined;
  const model = command === "research" ? values.model : refArgument?.model;
  const portable = portableSettings(model, values, env);
  const client = given ?? new Sonde({ env, ...(portable && { portable }) });
  switch (command) {
    case "research":
      return research(argument, values, client, io);
    case "attach": {
      const maxCostUSD = maxCostOf(values["max-cost"], command);
      const progress = new Progress();
      await seedProgress(progress, argument, refArgument!, client);
      const options = maxCostUSD !== undefined ? { maxCostUSD } : {};
      return stream(client.research.attach(refArgument!, options), io, values, progress);
    }
    case "status": {
      const snapshot = await client.research.get(refArgument!);
      io.stdout(`${JSON.stringify(snapshot, null, 2)}\n`);
      return 0;
    }
    case "cancel": {
      const outcome = await client.research.cancel(refArgument!);
      io.stdout(`${JSON.stringify(outcome, null, 2)}\n`);
      return outcome.outcome === "cancelled" || outcome.outcome === "already-terminal" ? 0 : 1;
    }
    case "models": {
      const provider =
        values.provider === undefined ? undefined : ProviderName.safeParse(values.provider, UNCOMPILED);
      if (provider && !provider.success)
        throw new UsageError(
          `unknown provider "${values.provider}": use one of ${ProviderName.options.join(", ")}`,
          command,
        );
      const models = client.research.listModels(provider ? { provider: provider.data } : {});
      if (values.json) {
        io.stdout(`${JSON.stringify(models, null, 2)}\n`);
        return 0;
      }
      const now = new Date();
      for (const m of models) io.stdout(`${describeModel(m, now)}\n`);
      return 0;
    }
    case "replay":
      return replay(argument, io);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** `sonde research "<query>" --model …`: estimate, start, then follow (or detach). */
async function research(argument: string | undefined, values: Flags, client: Sonde, io: Io): Promise<number> {
  const command = "research";
  if (!argument) throw new UsageError('missing "<query>"', command);
  if (!values.model) throw new UsageError("missing --model <provider:model> (see `sonde models`)", command);
  const timeoutMs = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0))
    throw new UsageError(
      `--timeout takes milliseconds as a positive whole number, not "${values.timeout}"`,
      command,
    );
  const maxCostUSD = maxCostOf(values["max-cost"], command);
  // The cap is enforced by the process that follows the job; a detached job has none.
  if (maxCostUSD !== undefined && values.detach)
    throw new UsageError(
      "--max-cost needs this process to follow the job, so it cannot go with --detach; pass --max-cost to `sonde attach` instead",
      command,
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
    await job.created();
    io.stdout(`${JSON.stringify(job.toRef(), null, 2)}\n`);
    // A local job would keep this process alive: pause it instead, attach continues it.
    await job.detach();
    io.stderr(
      job.toRef().provider === "portable"
        ? "Detached: the local job is paused with its progress saved. Continue it with `sonde attach <ref.json>`.\n"
        : "Detached: the job keeps running. Re-attach with `sonde attach <ref.json>`.\n",
    );
    return 0;
  }
  return stream(job, io, values);
}

/** `sonde replay <events.jsonl>`: a recorded job's report and sources, no network. */
function replay(argument: string | undefined, io: Io): number {
  const command = "replay";
  if (!argument) throw new UsageError("missing <events.jsonl>", command);
  const aggregator = new ResultAggregator();
  for (const [index, line] of readRecording(argument).split("\n").entries()) {
    if (!line.trim()) continue;
    const where = `${argument} line ${index + 1}`;
    const hint = "Give a file written by --record <file> or --json.";
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new UsageError(`${where} is not JSON (${(error as Error).message}). ${hint}`, command);
    }
    const event = ResearchEvent.safeParse(json, UNCOMPILED);
    if (!event.success)
      throw new UsageError(
        `${where} is not a Sonde event (${describeIssues(event.error)}). ${hint}`,
        command,
      );
    aggregator.add(event.data);
  }
  const result = aggregator.result();
  io.stdout(`${result.report}\n${renderSources(result)}`);
  io.stderr(
    `replayed: status ${result.status}, ${result.citations.length} sources, ${dollars(result.usage.costUSD)}\n`,
  );
  return 0;
}

function readRecording(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(
      code === "ENOENT" ? `no such file: ${path}` : `cannot read ${path} (${code ?? error})`,
      "replay",
    );
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
    const { message, exitCode } = describeFailure(error);
    io.stderr(message);
    process.exitCode = exitCode;
  }
}

/** What the CLI prints for an error run() threw, and its exit code. */
export function describeFailure(error: unknown): { message: string; exitCode: number } {
  if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    const help = error instanceof UsageError && error.command ? commandUsage[error.command] : undefined;
    return { message: `sonde: ${(error as Error).message}\n\n${help ?? usage}`, exitCode: 2 };
  }
  if (AuthenticationError.isInstance(error) && error.envVar) {
    // A CLI user configures keys in the environment, not in code.
    return {
      message: `sonde: no API key in ${error.envVar}: set it in the environment (export ${error.envVar}=…) and run again.\n`,
      exitCode: 1,
    };
  }
  if (SondeError.isInstance(error)) {
    // Messages written for code ("pass … to new Sonde()") get the command-line equivalent.
    const cli = /new Sonde\(\)/.test(error.message)
      ? "\nFrom the command line, flags and environment variables configure the engines: see `sonde research --help`.\n"
      : "";
    return { message: `sonde: ${error.name} (${error.code}): ${error.message}\n${cli}`, exitCode: 1 };
  }
  return { message: `sonde: ${(error as Error).message ?? String(error)}\n`, exitCode: 1 };
}

// Run when executed as the `sonde` binary, not when imported by tests.
if (process.argv[1] && /(?:^|[\\/])(?:cli|main)\.(?:c?js|ts)$|[\\/]sonde$/.test(process.argv[1])) void main();
