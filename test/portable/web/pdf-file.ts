/**
 * Writes real, minimal PDF files for tests: one page per entry, each line set in
 * Helvetica, with a correct cross-reference table. `{ image: true }` pages carry only a
 * drawn image-like block and no text, like a scan.
 */
export type PdfPage = { lines: string[] } | { image: true };

export function pdfFile(pages: PdfPage[], title?: string): Uint8Array {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body) - 0;
  add("<< /Type /Catalog /Pages 2 0 R >>");
  add(""); // pages tree, filled in below
  add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
  const kids: number[] = [];
  for (const page of pages) {
    const content =
      "lines" in page
        ? `BT /F1 12 Tf 72 720 Td 16 TL ${page.lines.map((l) => `(${l.replace(/[\\()]/g, (c) => `\\${c}`)}) '`).join(" ")} ET`
        : "q 0.5 g 72 300 468 400 re f Q";
    add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    const contentId = objects.length;
    add(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentId} 0 R >>`,
    );
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${kids.length} >>`;
  if (title) add(`<< /Title (${title}) /Producer (sonde tests) >>`);
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${title ? ` /Info ${objects.length} 0 R` : ""} >>\nstartxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}
