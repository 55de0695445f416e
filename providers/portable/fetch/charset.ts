/// <reference path="./vendor.d.ts" />
/**
 * Bytes to text by the page's own encoding, so a quotation from a windows-1252, Shift_JIS
 * or GB18030 page is the text a reader sees. The WHATWG order: byte-order mark, then the
 * HTTP `charset`, then (HTML) `<meta charset>` / `http-equiv` in the first 1,024 bytes, or
 * (XML) the XML declaration. Undeclared bytes are UTF-8 when they are valid UTF-8 and
 * windows-1252 otherwise, as browsers do for Western pages.
 */
import htmlEncodingSniffer from "html-encoding-sniffer";

export type TextKind = "html" | "xml" | "text";

export interface Decoded {
  text: string;
  /** WHATWG encoding name used (`UTF-8`, `windows-1252`, `Shift_JIS`, `gb18030`, …). */
  encoding: string;
}

export function charsetOf(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*("?)([^";\s]+)\1/i.exec(contentType);
  return match?.[2];
}

export function decodeBody(bytes: Uint8Array, contentType: string, kind: TextKind): Decoded {
  const label = charsetOf(contentType);
  const declared = htmlEncodingSniffer(bytes, {
    ...(kind === "xml" && { xml: true }),
    ...(kind === "text" && { maxPrescanBytes: 0 }),
    ...(label !== undefined && { transportLayerEncodingLabel: label }),
    defaultEncoding: null,
  });
  if (declared) return { text: decode(bytes, declared, false), encoding: declared };
  try {
    return { text: decode(bytes, "UTF-8", true), encoding: "UTF-8" };
  } catch {
    return { text: decode(bytes, "windows-1252", false), encoding: "windows-1252" };
  }
}

function decode(bytes: Uint8Array, encoding: string, fatal: boolean): string {
  let decoder: TextDecoder;
  try {
    // The BOM, if any, decided the encoding and is not part of the text.
    decoder = new TextDecoder(encoding, { fatal });
  } catch {
    throw new Error(`the page's character encoding "${encoding}" is not supported by this runtime`);
  }
  return decoder.decode(bytes);
}
