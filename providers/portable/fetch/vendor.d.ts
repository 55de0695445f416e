// html-encoding-sniffer ships no types; this is its documented call (README, "Options").
declare module "html-encoding-sniffer" {
  export default function htmlEncodingSniffer(
    bytes: Uint8Array,
    options?: {
      xml?: boolean;
      transportLayerEncodingLabel?: string;
      /** Returned when nothing is declared or sniffed (`null` tells "undeclared" apart). */
      defaultEncoding?: string | null;
      maxPrescanBytes?: number;
    },
  ): string | null;
}
