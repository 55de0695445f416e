/** PDFs read by the default fetcher: text page by page, with the page offsets citations use. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultFetcher } from "../../../providers/portable/index.js";
import { type Loopback, startLoopback } from "../../helpers/loopback.js";
import { guardConnections } from "./guard.js";
import { pdfFile } from "./pdf-file.js";

guardConnections();
const PAGE_1 = [
  "Annual cycling report 2024.",
  "Counting method: automatic loops (induction) on every bridge.",
];
const PAGE_2 = ["In 2024 the river bridge counter recorded 1,250 bicycle commuters per weekday."];
const PAGE_3 = ["Appendix: counter maintenance took 12 days in 2024."];
const report = pdfFile([{ lines: PAGE_1 }, { lines: PAGE_2 }, { lines: PAGE_3 }], "Cycling report 2024");
const scan = pdfFile([{ image: true }, { image: true }]);

const files: Record<string, [Uint8Array, string]> = {
  "/report.pdf": [report, "application/pdf"],
  "/download": [report, "application/octet-stream"],
  "/scan.pdf": [scan, "application/pdf"],
  "/broken.pdf": [report.slice(0, 200), "application/pdf"],
};

let server: Loopback;
beforeAll(async () => {
  server = await startLoopback((request, response) => {
    const file = files[request.url];
    if (!file) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": file[1] }).end(Buffer.from(file[0]));
  });
});
afterAll(() => server.close());

const fetcher = (maxBytes?: number) =>
  defaultFetcher({ allowHosts: ["127.0.0.1"], robots: false, ...(maxBytes && { maxBytes }) });
const read = (path: string, maxBytes?: number) =>
  fetcher(maxBytes).fetch(`${server.url}${path}`, { signal: new AbortController().signal });

describe("default fetcher: PDFs", () => {
  it("extracts the text layer page by page; pageStarts locate each page exactly", async () => {
    const page = await read("/report.pdf");
    expect(page).toMatchObject({
      extraction: "pdf",
      contentType: "application/pdf",
      title: "Cycling report 2024",
    });
    const starts = page.pageStarts!;
    expect(starts).toHaveLength(3);
    const pageText = (n: number) => page.text.slice(starts[n - 1], starts[n] ?? page.text.length).trim();
    expect(pageText(1)).toBe(PAGE_1.join("\n"));
    expect(pageText(2)).toBe(PAGE_2.join("\n"));
    expect(pageText(3)).toBe(PAGE_3.join("\n"));
  });

  it("recognizes a PDF served as application/octet-stream by its bytes", async () => {
    expect((await read("/download")).extraction).toBe("pdf");
  });

  it("refuses a PDF with no text layer (a scan), saying so", async () => {
    await expect(read("/scan.pdf")).rejects.toThrow(
      /the PDF has no text layer \(2 page\(s\), likely scanned images\)/,
    );
  });

  it("refuses a PDF over maxBytes instead of parsing half of it, and a truncated one as unparsable", async () => {
    await expect(read("/report.pdf", 500)).rejects.toThrow(/over the fetcher's maxBytes \(500\)/);
    await expect(read("/broken.pdf")).rejects.toThrow("the PDF could not be parsed (Invalid PDF structure.)");
  });
});
