/**
 * No function in src/ or providers/ runs past MAX_LINES: a long function is a module waiting
 * to be named. Measured with the TypeScript compiler, over every function, method, accessor,
 * constructor and arrow with a body (its lines from the declaration to the closing brace).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const MAX_LINES = 120;
const root = resolve(import.meta.dirname, "..");

/**
 * Functions over the limit in files other engineers were rewriting when the guard landed.
 * Each entry is `path:name` and its owner; the integrator removes an entry once that work is
 * merged and the function is split. A listed function that shrinks under the limit fails the
 * test too, so the list cannot go stale.
 */
const allowed = new Map<string, string>([]);

interface Measured {
  key: string;
  where: string;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(full);
  }
  return out;
}

function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  if (named.name && ts.isPrivateIdentifier(named.name)) return named.name.text;
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return "(anonymous)";
}

function measure(file: string): Measured[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const path = relative(root, file).split(sep).join("/");
  const found: Measured[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ key: `${path}:${nameOf(node)}`, where: `${path}:${start + 1}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const measured = ["src", "providers"].flatMap((dir) => sourceFiles(join(root, dir))).flatMap(measure);

describe("function length", () => {
  it("measures real functions (guards against a vacuous pass)", () => {
    expect(measured.length).toBeGreaterThan(500);
    expect(measured.some((m) => m.key === "src/errors.ts:errorFromReport")).toBe(true);
  });

  it(`no function in src/ or providers/ is longer than ${MAX_LINES} lines`, () => {
    const tooLong = measured
      .filter((m) => m.lines > MAX_LINES && !allowed.has(m.key))
      .map((m) => `${m.where} ${m.key.split(":").at(-1)}: ${m.lines} lines`);
    expect(tooLong, "split these into named steps").toEqual([]);
  });

  it("the allow-list names only functions that are still over the limit", () => {
    const over = new Set(measured.filter((m) => m.lines > MAX_LINES).map((m) => m.key));
    expect([...allowed.keys()].filter((key) => !over.has(key))).toEqual([]);
  });
});
