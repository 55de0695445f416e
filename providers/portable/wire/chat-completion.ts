/**
 * The OpenAI-compatible `POST /chat/completions` response (non-streaming), minimal and
 * lenient: unknown keys pass, optional fields are `nullish`.
 */
import { z } from "zod";

const ContentPart = z.object({ type: z.string().nullish(), text: z.string().nullish() });

export const ChatCompletion = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.union([z.string(), z.array(ContentPart)]).nullish() }).nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z
    .object({
      prompt_tokens: z.number().nullish(),
      completion_tokens: z.number().nullish(),
      total_tokens: z.number().nullish(),
      completion_tokens_details: z.object({ reasoning_tokens: z.number().nullish() }).nullish(),
      /** OpenRouter: the charge in credits (1 credit = 1 USD). */
      cost: z.number().nullish(),
    })
    .nullish(),
});
export type ChatCompletion = z.infer<typeof ChatCompletion>;
