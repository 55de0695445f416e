import type * as Msw from "msw";
import { MissingDependencyError } from "../../errors.js";

let loaded: typeof Msw | undefined;

/**
 * msw, loaded on first use from the user's project: msw is an optional peer, so
 * importing `sonde/testing/msw` never needs it and only building handlers does.
 * Synchronous (the factories are), through `require`; msw ships ESM only, which
 * Node >= 20.19 loads with `require` as the very module instance `import` gives.
 */
export function loadMsw(): typeof Msw {
  if (loaded) return loaded;
  const module = process.getBuiltinModule("node:module");
  // ESM has import.meta.url; the CJS build has no import.meta (tsup leaves it empty) and
  // uses __filename. Not the other way round: under `node --eval` a global __filename
  // ("[eval]") is visible to ESM too, and createRequire refuses it.
  const from = (import.meta as { url?: string }).url ?? __filename;
  const require = module.createRequire(from);
  try {
    loaded = require("msw") as typeof Msw;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new MissingDependencyError(
      "msw",
      "sonde/testing/msw builds msw handlers, and msw is not installed: run `npm install --save-dev msw` " +
        "(an optional peer dependency of sonde, needed only for these handlers).",
      { cause: error },
    );
  }
  return loaded;
}
