/** The Responses HTTP error body, read by a provider's failure mapping (loaded with the first failure). */
import { z } from "zod";
import { WireCode } from "./wire.js";

const str = z.string().nullish();

/** `{ "error": { "message", "type", "param", "code" } }`. */
export const WireErrorBody = z.looseObject({
  error: z.looseObject({ message: str, type: str, code: WireCode, param: str }).nullish(),
});
