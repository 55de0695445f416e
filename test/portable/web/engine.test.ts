/**
 * The default fetcher inside the research loop, against a loopback server: what a user
 * sees of a refused target (a gap naming the URL and the reason) and of a PDF source
 * (citations that name their page).
 */
import { getResponse } from "msw";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryStore, defaultFetcher } from "../../../providers/portable/index.js";
import { type Loopback, startLoopback } from "../../helpers/loopback.js";
import { collect, MODEL, portableClient, scriptedChat } from "../helpers.js";
import { guardConnections, tableLookup } from "./guard.js";
import { pdfFile } from "./pdf-file.js";

const guard = guardConnections();
let web: Loopback;
const SERVER = "pages.test";
let base: string;

const REPORT = pdfFile(
  [
    { lines: ["Annual cycling report 2024.", "Counting method: automatic loops on every bridge."] },
    { lines: ["In 2024 the river bridge counter recorded 1,250 bicycle commuters per weekday."] },
  ],
  "Cycling report 2024",
);

beforeAll(async () => {
  web = await startLoopback((request, response) => {
    const url = new URL(request.url, "http://x");
    if (url.pathname === "/robots.txt") return void response.writeHead(404).end();
    if (url.pathname === "/report.pdf")
      return void response.writeHead(200, { "content-type": "application/pdf" }).end(Buffer.from(REPORT));
    if (url.pathname === "/scan.pdf")
      return void response
        .writeHead(200, { "content-type": "application/pdf" })
        .end(Buffer.from(pdfFile([{ image: true }])));
    if (url.pathname === "/metadata")
      return void response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    response.writeHead(404).end();
  });
  base = `http://${SERVER}:${new URL(web.url).port}`;
});
afterAll(() => web.close());

function client() {
  const chat = scriptedChat();
  // The chat endpoint is answered in-process through the client's fetch: no socket at all.
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await getResponse([chat.handler], new Request(input, init));
    if (!response) throw new Error(`no chat handler for ${String(input)}`);
    return response;
  };
  const { lookup } = tableLookup({ [SERVER]: ["127.0.0.1"] });
  const store = createMemoryStore();
  return {
    chat,
    store,
    client: portableClient({ fetcher: defaultFetcher({ allowHosts: [SERVER], lookup }), store, fetch }),
  };
}

const QUERY = "How many bicycle commuters crossed the river bridge in 2024?";

describe("default fetcher in the research loop", () => {
  it("turns a redirect into the metadata service into a gap naming the URL and the reason", async () => {
    const { client: sonde } = client();
    const start = `${base}/metadata`;
    const events = await collect(
      sonde.research.start({ model: MODEL, query: QUERY, sources: { urls: [start], web: false } }),
    );
    const gaps = events.flatMap((e) => (e.type === "gap" ? [e.gap] : []));
    expect(gaps).toContainEqual({
      kind: "unreadable-source",
      source: start,
      detail: `${start} could not be read: refused http://169.254.169.254/latest/meta-data/ (redirected from ${start}): 169.254.169.254 is a cloud instance-metadata address; to read a local host on purpose, name it in the fetcher's allowHosts.`,
    });
    expect(guard.attempts.every((a) => a === "127.0.0.1")).toBe(true);
  });

  it("reads a PDF page by page, and its citation names the page its quote is on", async () => {
    const { client: sonde, chat, store } = client();
    const job = sonde.research.start({
      model: MODEL,
      query: QUERY,
      sources: { urls: [`${base}/report.pdf`], web: false },
    });
    await collect(job);
    const result = await job.result();
    const extract = chat.calls.find((c) => c.task === "extract")!;
    expect([...extract.sources.values()][0]).toContain(
      "In 2024 the river bridge counter recorded 1,250 bicycle commuters per weekday.",
    );
    const cited = result.citations.find((c) => c.quote?.includes("1,250 bicycle commuters"));
    expect(cited).toMatchObject({
      url: `${base}/report.pdf`,
      title: "Cycling report 2024",
      page: 2,
      verified: true,
    });
    // The fetch receipt keeps the page offsets: a job continued after a restart cites the same pages.
    const receipts = await store.readReceipts(job.toRef().jobId);
    expect(receipts.find((r) => r.kind === "fetch")?.result).toMatchObject({
      extraction: "pdf",
      pageStarts: [0, expect.any(Number)],
    });
  });

  it("reports a scanned PDF (no text layer) as an unreadable source, saying why", async () => {
    const { client: sonde } = client();
    const url = `${base}/scan.pdf`;
    const events = await collect(
      sonde.research.start({ model: MODEL, query: QUERY, sources: { urls: [url], web: false } }),
    );
    expect(events.flatMap((e) => (e.type === "gap" ? [e.gap] : []))).toContainEqual({
      kind: "unreadable-source",
      source: url,
      detail: `${url} could not be read: the PDF has no text layer (1 page(s), likely scanned images); run OCR on it and pass the text as sources.documents.`,
    });
  });
});
