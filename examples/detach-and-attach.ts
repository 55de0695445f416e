/**
 * Start a long job, save its ref, and pick it up later — in another process, after a
 * deploy or a crash. The ref is plain JSON with no secret in it.
 *
 *   npx tsx examples/detach-and-attach.ts start "question" > job.json
 *   npx tsx examples/detach-and-attach.ts attach job.json
 */
import { readFileSync } from "node:fs";
import { JobAbortedError, Sonde } from "sonde";

const client = new Sonde();
const [command, argument] = process.argv.slice(2);

if (command === "start") {
  const job = client.research.start({ model: "gemini:deep-research-preview-04-2026", query: argument ?? "" });
  for await (const event of job) {
    // The ref exists from the `created` event on; leaving the loop closes only our
    // connection: the job keeps running on the provider's side.
    if (event.type === "created") break;
  }
  console.log(JSON.stringify(job.toRef()));
} else if (command === "attach") {
  const ref = JSON.parse(readFileSync(argument ?? "job.json", "utf8"));
  const snapshot = await client.research.get(ref);
  console.error(`status: ${snapshot.status}`);
  const job = client.research.attach(ref, { timeoutMs: 30 * 60_000 });
  try {
    for await (const event of job) if (event.type === "text") process.stdout.write(event.delta);
    const result = await job.result();
    console.error(
      `\n${result.status}: ${result.citations.length} sources, $${result.usage.costUSD.toFixed(2)}`,
    );
  } catch (error) {
    // A local timeout leaves the remote job alone: attach again later, or cancel it.
    if (JobAbortedError.isInstance(error)) console.error("gave up waiting; the ref is still good");
    else throw error;
  }
} else if (command === "cancel") {
  const outcome = await client.research.cancel(JSON.parse(readFileSync(argument ?? "job.json", "utf8")));
  console.error(outcome);
}
