/**
 * Stream a deep research job: progress on stderr, the report on stdout, sources at the end.
 * Run: OPENAI_API_KEY=... npx tsx examples/stream-report.ts "your question"
 * (or with --model portable:demo/offline to run offline with no key).
 */
import { Sonde } from "sonde";

const query = process.argv[2] ?? "What changed in EU battery regulation in 2025?";
const model = process.argv.includes("--model")
  ? process.argv[process.argv.indexOf("--model") + 1]!
  : "openai:gpt-5.5-pro";

const client = new Sonde();
const job = client.research.start({ model, query, reasoning: { summary: "auto" } });

for await (const event of job) {
  switch (event.type) {
    case "created":
      console.error(`job ${event.jobId} started on ${event.model}`);
      break;
    case "search":
      if (event.state === "started") console.error(`  ${event.action} ${event.query ?? event.url ?? ""}`);
      break;
    case "thinking":
      break; // reasoning summaries stream here; show them if your UI has room
    case "text":
      process.stdout.write(event.delta);
      break;
    case "usage":
      console.error(`  cost so far $${event.usage.costUSD.toFixed(3)} (${event.usage.costSource})`);
      break;
    case "error":
      console.error(`error ${event.error.code}: ${event.error.message}`);
      break;
  }
}

const result = await job.result();
console.log("\n\nSources:");
for (const [i, citation] of result.citations.entries())
  console.log(`${i + 1}. ${citation.title ?? ""} ${citation.url}`);
