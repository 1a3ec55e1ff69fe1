// Cases that need something this machine may not have (root, above all: chown to another
// user, chattr). On a developer's machine such a case is skipped with one line saying why; in CI
// (CI=true, which .ci/run and GitHub Actions set) a missing requirement is a failure, so a
// runner that lost root can never report the cases as passed — the pattern of the Windows
// suite (test/windows/windows.test.ts), kept in one place (docs/hardening.md#tests-that-could-not-fail: 21 root-only sites skipped
// silently where the runner was not root).
import { test } from "bun:test";

export const IN_CI = process.env.CI === "true";
export const IS_ROOT = process.getuid?.() === 0;

const failure = (requirement: string) => () => {
  throw new Error(`this case needs ${requirement}, which this run does not have; with CI=true a skip is a failure`);
};

/**
 * testIf(ok, requirement) → `test` when ok; else, under CI=true, a `test` (and `.each`) whose
 * body fails naming the requirement; else `test.skip`. Use: testIf(IS_ROOT, "root")("name", fn).
 */
export function testIf(ok: boolean, requirement: string): typeof test {
  if (ok) return test;
  if (!IN_CI) {
    warnOnce(requirement);
    return test.skip;
  }
  const fail = failure(requirement);
  const failing = ((name: string, _fn: unknown, options?: number) =>
    test(name, fail, options)) as unknown as typeof test;
  (failing as { each: unknown }).each = (rows: readonly unknown[]) => (name: string, _fn: unknown, options?: number) =>
    test.each(rows as unknown[][])(name, fail, options);
  return failing;
}

/**
 * missing(ok, requirement) → false when ok; else true after one stderr line (a row of a table
 * that needs it returns early), or, under CI=true, throws. For a row inside a table of rows
 * that do not all need it.
 */
export function missing(ok: boolean, requirement: string): boolean {
  if (ok) return false;
  if (IN_CI) failure(requirement)();
  warnOnce(requirement);
  return true;
}

const warned = new Set<string>();
function warnOnce(requirement: string): void {
  if (warned.has(requirement)) return;
  warned.add(requirement);
  console.warn(`skipped: cases that need ${requirement} (with CI=true they fail)`);
}
