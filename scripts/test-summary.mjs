#!/usr/bin/env node
// Prints vitest's totals as one plain closing line ("N passed, N failed") that CI can read.
import { readFileSync, rmSync } from "node:fs";

const file = process.argv[2] ?? ".vitest-results.json";
const results = JSON.parse(readFileSync(file, "utf8"));
rmSync(file, { force: true });
const skipped = results.numPendingTests + results.numTodoTests;
console.log(
  `${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ""}`,
);
process.exitCode = results.numFailedTests > 0 || !results.success ? 1 : 0;
