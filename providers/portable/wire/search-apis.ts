/**
 * The responses of the three search APIs (Tavily, Brave, SearXNG), minimal and lenient:
 * unknown keys pass, optional fields are `nullish`.
 */
import { z } from "zod";

/** Tavily `POST /search`. */
export const TavilyResponse = z.lazy(() =>
  z.object({
    results: z
      .array(z.object({ url: z.string(), title: z.string().nullish(), content: z.string().nullish() }))
      .nullish(),
  }),
);

/** Brave `GET /res/v1/web/search`. */
export const BraveResponse = z.lazy(() =>
  z.object({
    web: z
      .object({
        results: z
          .array(
            z.object({ url: z.string(), title: z.string().nullish(), description: z.string().nullish() }),
          )
          .nullish(),
      })
      .nullish(),
  }),
);

/** SearXNG `GET /search?format=json`. */
export const SearxngResponse = z.lazy(() =>
  z.object({
    results: z
      .array(z.object({ url: z.string(), title: z.string().nullish(), content: z.string().nullish() }))
      .nullish(),
  }),
);
