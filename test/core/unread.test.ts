/**
 * `ConnectOptions.unread`: a session may skip building payloads only when no event is
 * delivered — `result()` alone with no observer or spend cap. Anything that sees events
 * (an iterator, an observer, the spend meter) gets full payloads, `rawEvent` included.
 */
import { expect, it } from "vitest";
import type { ConnectOptions, EngineSession } from "../../src/provider.js";
import { fakeJob, fakeSession, script } from "../helpers/fake-engine.js";

function recording(): { session: EngineSession; seen: (boolean | undefined)[] } {
  const session = fakeSession({ events: script(20) });
  const seen: (boolean | undefined)[] = [];
  const connect = session.connect.bind(session);
  session.connect = (options: ConnectOptions) => {
    seen.push(options.unread);
    return connect(options);
  };
  return { session, seen };
}

it("result() alone connects unread; the result is the same as an iterated job's", async () => {
  const alone = recording();
  const result = await fakeJob(alone.session).result();
  expect(alone.seen).toEqual([true]);

  const iterated = recording();
  const job = fakeJob(iterated.session);
  const raw: unknown[] = [];
  for await (const event of job) if (event.type === "text") raw.push(event.rawEvent);
  expect(iterated.seen).toEqual([false]);
  expect(raw.every((r) => r !== undefined)).toBe(true);
  expect(await job.result()).toEqual(result);
});

it("an observer or a spend cap reads the events: the connection is not unread", async () => {
  const observed = recording();
  await fakeJob(observed.session, { observe: () => () => {} }).result();
  expect(observed.seen).toEqual([false]);

  const capped = recording();
  await fakeJob(capped.session, { maxCostUSD: 1000 }).result();
  expect(capped.seen).toEqual([false]);
});
