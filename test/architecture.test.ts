// The rooms of the house and which may import which (ARCHITECTURE.md). A rule broken here
// is a package a user pays for without using it, or a provider change that breaks another.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");

interface Import {
  from: string; // repo-relative file that imports
  target: string; // repo-relative file, or the bare package name
  local: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.(ts|mts|cts)$/.test(name) && !name.endsWith(".d.ts")) out.push(full);
    }
  };
  walk(join(root, dir));
  return out;
}

function importsOf(file: string): Import[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  const from = relative(root, file).split(sep).join("/");
  return info.importedFiles.map(({ fileName }) => {
    if (!fileName.startsWith(".")) {
      const parts = fileName.split("/");
      const name = fileName.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
      return { from, target: name, local: false };
    }
    const target = relative(root, resolve(dirname(file), fileName))
      .split(sep)
      .join("/");
    return { from, target: target.replace(/\.js$/, ".ts"), local: true };
  });
}

const all = ["src", "providers", "catalog"].flatMap(sourceFiles).flatMap(importsOf);
const room = (path: string) => path.split("/").slice(0, 2).join("/");

// Optional integrations: each its own entry with its library as an optional peer.
const integrations = ["src/testing", "src/redis", "src/worker", "src/tracing", "src/cli"];
const optionalPeers = ["msw", "ioredis", "bullmq", "@opentelemetry/api", "@opentelemetry/sdk-trace-base"];
const isIntegration = (path: string) => integrations.some((dir) => path.startsWith(`${dir}/`));
// The one place the core wires concrete adapters in.
const isRegistry = (path: string) => path === "src/registry.ts";
// A provider's testing.ts is its wire-speaking fake, served through sonde/testing's helpers.
const isProviderTestSupport = (path: string) => /^providers\/[^/]+\/testing\.ts$/.test(path);
const isCore = (path: string) => path.startsWith("src/") && !isIntegration(path) && !isRegistry(path);

function offenders(rule: (i: Import) => boolean): string[] {
  return all.filter(rule).map((i) => `${i.from} -> ${i.target}`);
}

describe("import rules", () => {
  it("reads the real import graph (guards against a vacuous pass)", () => {
    expect(all.filter((i) => i.from.startsWith("providers/openai/")).length).toBeGreaterThan(5);
    expect(all.some((i) => isRegistry(i.from) && i.target.startsWith("providers/"))).toBe(true);
  });

  it("catalog/ imports nothing but zod and itself", () => {
    expect(
      offenders(
        (i) =>
          i.from.startsWith("catalog/") && (i.local ? !i.target.startsWith("catalog/") : i.target !== "zod"),
      ),
    ).toEqual([]);
  });

  it("a provider never imports another provider", () => {
    expect(
      offenders(
        (i) =>
          i.from.startsWith("providers/") &&
          i.local &&
          i.target.startsWith("providers/") &&
          room(i.target) !== room(i.from),
      ),
    ).toEqual([]);
  });

  it("a provider imports the core and the catalog, never an integration, the registry or the CLI", () => {
    expect(
      offenders(
        (i) =>
          i.from.startsWith("providers/") &&
          i.local &&
          (isRegistry(i.target) ||
            (isIntegration(i.target) &&
              !(isProviderTestSupport(i.from) && i.target.startsWith("src/testing/")))),
      ),
    ).toEqual([]);
  });

  it("the core never imports a concrete provider (only the registry does)", () => {
    expect(offenders((i) => isCore(i.from) && i.local && i.target.startsWith("providers/"))).toEqual([]);
  });

  it("the core never imports an optional integration or its library", () => {
    expect(
      offenders(
        (i) => isCore(i.from) && (i.local ? isIntegration(i.target) : optionalPeers.includes(i.target)),
      ),
    ).toEqual([]);
  });

  it("a wire protocol is one module its providers configure: never imports a provider or another protocol", () => {
    const protocol = (path: string) => path.split("/").slice(0, 3).join("/");
    expect(
      offenders(
        (i) =>
          i.from.startsWith("src/protocols/") &&
          i.local &&
          (i.target.startsWith("providers/") ||
            (i.target.startsWith("src/protocols/") && protocol(i.target) !== protocol(i.from))),
      ),
    ).toEqual([]);
    const users = (dir: string) =>
      new Set(
        all
          .filter((i) => i.target.startsWith(`${dir}/`) && i.from.startsWith("providers/"))
          .map((i) => room(i.from)),
      );
    // Its users configure it rather than keep a copy of it.
    expect([...users("src/protocols/chat-completions")]).toEqual(
      expect.arrayContaining(["providers/openrouter", "providers/portable"]),
    );
    expect([...users("src/protocols/responses")]).toEqual(
      expect.arrayContaining(["providers/openai", "providers/perplexity"]),
    );
  });

  it("an optional peer is imported only by its integration", () => {
    expect(
      offenders(
        (i) =>
          !i.local &&
          optionalPeers.includes(i.target) &&
          !isIntegration(i.from) &&
          !isProviderTestSupport(i.from),
      ),
    ).toEqual([]);
  });
});
