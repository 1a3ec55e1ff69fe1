// The real velesdb-memory, for the suites that check a double against it or run on it (issue 34
// §5). `.ci/run` builds crates.io velesdb-memory 0.17.0 with `--features http` into a cache
// outside the clone and exports VELESDB_MEMORY_BIN_REAL (docs/real-server.md). On a developer's
// machine without it those suites skip, saying so once; with CI=true they FAIL instead, so a CI
// run can never pass without having run them.
import { describe, test } from "bun:test";
import * as path from "node:path";

/** The release every double is derived from (test/e2e/velesdb-memory-wire.json says how). */
export const REAL_VERSION = "0.17.0";
/** Where that release came from: the crate's .cargo_vcs_info.json names the VelesDB commit. */
export const REAL_SOURCE = "crates.io velesdb-memory 0.17.0 (packaged from VelesDB a9eeabadcc96777cc42770fcc1492b472217e726), built with --features http";

export type RealBinary = { readonly ok: true; readonly bin: string } | { readonly ok: false; readonly why: string };

/**
 * findRealVelesdbMemory(env) → the binary VELESDB_MEMORY_BIN_REAL names when it is absolute and
 * answers `--version` with velesdb-memory 0.17.0; otherwise why not, in one line.
 */
export function findRealVelesdbMemory(env: NodeJS.ProcessEnv = process.env): RealBinary {
  const bin = env.VELESDB_MEMORY_BIN_REAL;
  if (!bin) return { ok: false, why: "VELESDB_MEMORY_BIN_REAL is not set (.ci/run builds velesdb-memory 0.17.0 and sets it)" };
  if (!path.isAbsolute(bin)) return { ok: false, why: `VELESDB_MEMORY_BIN_REAL=${JSON.stringify(bin)} is not an absolute path` };
  let said = "";
  try {
    const run = Bun.spawnSync([bin, "--version"], { stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: 10_000, env: { PATH: "/usr/bin:/bin" } });
    said = run.stdout.toString().trim();
  } catch (error) {
    return { ok: false, why: `VELESDB_MEMORY_BIN_REAL=${JSON.stringify(bin)} does not run (${(error as Error).message})` };
  }
  if (said !== `velesdb-memory ${REAL_VERSION}`) {
    return { ok: false, why: `VELESDB_MEMORY_BIN_REAL=${JSON.stringify(bin)} says ${JSON.stringify(said)}, not "velesdb-memory ${REAL_VERSION}" (the doubles are derived from ${REAL_VERSION})` };
  }
  return { ok: true, bin };
}

const found = findRealVelesdbMemory();
const warned = new Set<string>();

/** realBinary() → the real binary's path; only call it inside a test of describeWithReal. */
export function realBinary(): string {
  if (!found.ok) throw new Error(found.why);
  return found.bin;
}

/** Whether the real binary is at hand (for a test.skipIf beside describeWithReal). */
export const hasRealBinary = found.ok;

/**
 * describeWithReal(name, body) → `describe(name, body)` when the real binary is at hand. Without
 * it: under CI=true one failing test naming why; elsewhere the block is skipped, with one warning.
 * `body` must only reach the binary inside its tests (realBinary()), never while collecting.
 */
export function describeWithReal(name: string, body: () => void): void {
  if (found.ok) {
    describe(name, body);
    return;
  }
  if (process.env.CI === "true") {
    describe(name, () => {
      test("the real velesdb-memory is there (CI=true: this suite may not skip)", () => {
        throw new Error(found.why);
      });
    });
    return;
  }
  if (!warned.has(found.why)) {
    warned.add(found.why);
    console.warn(`skipped, needs the real velesdb-memory: ${found.why} (with CI=true this fails)`);
  }
  describe.skip(name, body);
}
