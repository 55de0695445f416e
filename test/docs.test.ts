/**
 * The docs stand on their own: typedoc documents every entry of the package, every public
 * function shows an `@example`, and a `§` in the code cites a document that is in this repo.
 * (`npm run check:docs` runs typedoc itself, failing on any warning; it is too slow for `npm test`.)
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const typedoc = JSON.parse(readFileSync(join(root, "typedoc.json"), "utf8")) as { entryPoints: string[] };

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return full.endsWith(".ts") && !full.endsWith(".d.ts") ? [full] : [];
  });
}

/** The source file of each entry `package.json` exports (tsup.config.ts maps them the same way). */
const entries = [
  "src/index.ts",
  "src/core.ts",
  "src/provider-entry.ts",
  "src/testing/index.ts",
  "src/testing/msw/index.ts",
  "catalog/index.ts",
  "src/tracing/index.ts",
  "src/redis/index.ts",
  "src/worker/index.ts",
  ...readdirSync(join(root, "providers"))
    .filter((name) => existsSync(join(root, "providers", name, "index.ts")))
    .map((name) => `providers/${name}/index.ts`),
];

describe("generated docs", () => {
  it("typedoc documents every entry, the providers/* ones included", () => {
    expect(entries.filter((entry) => !typedoc.entryPoints.includes(entry))).toEqual([]);
    expect(typedoc.entryPoints.filter((entry) => !existsSync(join(root, entry)))).toEqual([]);
    expect(typedoc.entryPoints).toContain("providers/portable/index.ts");
  });

  it("every public function exported by an entry has an @example", () => {
    const program = ts.createProgram(
      entries.map((entry) => join(root, entry)),
      {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        allowJs: false,
        noEmit: true,
      },
    );
    const checker = program.getTypeChecker();
    const missing = new Set<string>();
    let functions = 0;
    for (const entry of entries) {
      const source = program.getSourceFile(join(root, entry));
      const module = source && checker.getSymbolAtLocation(source);
      if (!module) throw new Error(`no module for ${entry}`);
      for (const exported of checker.getExportsOfModule(module)) {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        const declaration = symbol.declarations?.[0];
        if (!declaration || declaration.getSourceFile().isDeclarationFile) continue;
        const isFunction =
          ts.isFunctionDeclaration(declaration) ||
          (ts.isVariableDeclaration(declaration) &&
            !!declaration.initializer &&
            (ts.isArrowFunction(declaration.initializer) ||
              ts.isFunctionExpression(declaration.initializer)));
        if (!isFunction) continue;
        functions++;
        const tags = ts
          .getJSDocTags(declaration)
          .concat(ts.isVariableDeclaration(declaration) ? ts.getJSDocTags(declaration.parent.parent) : []);
        if (tags.some((tag) => tag.tagName.text === "internal")) continue;
        if (!tags.some((tag) => tag.tagName.text === "example")) {
          const file = declaration.getSourceFile().fileName.slice(root.length + 1);
          missing.add(`${file}: ${symbol.name}`);
        }
      }
    }
    expect(functions).toBeGreaterThan(20);
    expect([...missing].sort()).toEqual([]);
  });
});

describe("citations", () => {
  it("a § in src/ or providers/ cites a document inside the repository", () => {
    const broken: string[] = [];
    for (const file of ["src", "providers"].flatMap((dir) => sources(join(root, dir)))) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, index) => {
          if (!line.includes("§")) return;
          const where = `${file.slice(root.length + 1)}:${index + 1}`;
          const named = line.match(/[\w./-]+\.md/g);
          if (!named) broken.push(`${where}: § with no document named`);
          for (const doc of named ?? []) {
            const found = [join(dirname(file), doc), join(root, doc)].some((path) => existsSync(path));
            if (!found) broken.push(`${where}: ${doc}`);
          }
        });
    }
    expect(broken).toEqual([]);
  });
});
