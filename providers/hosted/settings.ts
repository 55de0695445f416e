import { z } from "zod";
import { lazySchema } from "../../src/lazy-schema.js";
import { shapeSettings } from "../../src/plain-settings.js";
import { engineSettingsShape, timerMs } from "../../src/settings.js";

/** `new Sonde({ hosted })`: the key and base URL (`SONDE_HOSTED_*`), and how long a cancel waits. */
export const hostedSettingsSchema = shapeSettings(
  lazySchema(() =>
    z.strictObject({
      ...engineSettingsShape,
      /** How long `cancel()` polls for `canceled` after the DELETE before answering `pending`. @defaultValue 60_000 */
      cancelWaitMs: timerMs().optional(),
    }),
  ),
);

export type HostedSettings = z.input<typeof hostedSettingsSchema>;
