/**
 * A user's script, run as a real child process by exit.test.ts: it starts a local job,
 * leaves the loop at `created`, prints the ref, and (with MODE=detach, once told on stdin)
 * detaches the job.
 */
import { Sonde } from "../../../src/index.js";

const client = new Sonde({
  env: {},
  portable: { chat: { local: { baseURL: process.env.CHAT_URL! } }, store: { dir: process.env.STORE_DIR! } },
});
const job = client.research.start({
  model: "portable:local/test-model",
  query: "How many cyclists crossed the river bridge in 2024?",
  sources: {
    documents: [{ id: "memo", text: "In 2024 the counter recorded 1.2 million bicycle crossings." }],
  },
});
for await (const event of job) if (event.type === "created") break;
process.stdout.write(`${JSON.stringify(job.toRef())}\n`);
if (process.env.MODE === "detach") {
  // The test says when the loop is inside a model call, so detach() must abandon it.
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.destroy();
  await job.detach();
}
