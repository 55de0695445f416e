#!/usr/bin/env node
// Type-checks every ```ts block of the README against the real sources, so the README
// cannot drift from the API. Each block is its own module; the names a snippet leaves
// to the reader (your key, your storage) are declared in a shared prelude.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const out = join(root, ".readme-check");
const prelude = `import type { JobRef, ResearchJob } from "sonde";
import { Sonde } from "sonde";
declare const apiKey: string;
declare const baseURL: string;
declare function saveSomewhere(ref: JobRef): void;
declare const db: { save(text: string): Promise<void> };
declare const saved: string;
declare const client: Sonde;
declare const job: ResearchJob;
`;
const blocks = [...readFileSync(join(root, "README.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map(
  (m) => m[1],
);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
blocks.forEach((code, i) => {
  // A block that makes its own client or imports shadows the prelude's declarations.
  const own = /\bconst client\b/.test(code) ? prelude.replace("declare const client: Sonde;\n", "") : prelude;
  const imports = [...code.matchAll(/^import .*$/gm)].map((m) => m[0]);
  const body = code.replace(/^import .*$/gm, "");
  // Only a block importing Sonde itself replaces the prelude's import of it.
  const head = imports.some((line) => /\bSonde\b.*from "sonde";/.test(line))
    ? own.replace('import { Sonde } from "sonde";\n', "")
    : own;
  const fixedHead = /\bconst job\b/.test(code) ? head.replace("declare const job: ResearchJob;\n", "") : head;
  writeFileSync(join(out, `block-${i + 1}.ts`), `${imports.join("\n")}\n${fixedHead}\n${body}\nexport {};\n`);
});
writeFileSync(
  join(out, "tsconfig.json"),
  JSON.stringify({
    extends: "../tsconfig.json",
    compilerOptions: { noUnusedLocals: false },
    include: ["*.ts"],
  }),
);
try {
  execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-p", join(out, "tsconfig.json"), "--noEmit"], {
    stdio: "inherit",
  });
  console.log(`README: ${blocks.length} TypeScript blocks type-check`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
