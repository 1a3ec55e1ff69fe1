// SPEC §2/§12: a hook must not pay for code it does not run. The binary is built here exactly
// as the release builds it (scripts/build.ts's compileBinary and COMPILE_FLAGS: --compile
// --minify --bytecode --splitting …), with Bun's metafile beside it, and the module graph of
// that very build is checked:
// - what every hook evaluates (the entry chunk and its static imports) imports only the
//   built-ins every hook needs: one static `node:crypto` anywhere on it cost ~2 ms of a ~5 ms hook;
// - no hook can evaluate zod, @iarna/toml or jsonc-parser: they are reachable only through the
//   installer's lazy import, which no `<host> <event>` takes.
// A test bundle without the release flags (the earlier version of this file) cannot see either:
// the chunks and their import kinds exist only in the split build (issue 12).
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compileBinary, packageVersion, versionDefine } from "../scripts/build.ts";
import { REPO_ROOT } from "./support/hook-runner.ts";

const HOOK_PATH_BUILTINS = ["fs", "path"];
const INSTALLER_LIBRARIES: ReadonlyArray<readonly [string, RegExp]> = [
  ["zod", /(^|\/)node_modules\/zod\//],
  ["@iarna/toml", /(^|\/)node_modules\/@iarna\/toml\//],
  ["jsonc-parser", /(^|\/)node_modules\/jsonc-parser\//],
];
const INSTALLER_ENTRY = "src/install/index.ts";

interface MetaImport {
  readonly path: string;
  readonly kind: string;
  readonly external?: boolean;
}
interface Metafile {
  readonly inputs: Record<string, { readonly imports: readonly MetaImport[] }>;
  readonly outputs: Record<string, { readonly inputs: Record<string, unknown>; readonly imports: readonly MetaImport[]; readonly entryPoint?: string }>;
}

let dir: string;
let meta: Metafile;
let entryChunk: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-hotpath-"));
  const metafile = path.join(dir, "meta.json");
  compileBinary(path.join(REPO_ROOT, "src", "cli.ts"), path.join(dir, "velesdb-hooks"), [...versionDefine(packageVersion()), `--metafile=${metafile}`]);
  meta = JSON.parse(fs.readFileSync(metafile, "utf8")) as Metafile;
  entryChunk = Object.keys(meta.outputs).find((name) => meta.outputs[name]!.entryPoint === "src/cli.ts")!;
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** closure(start, follow) → every output chunk reachable from `start` through imports `follow` accepts. */
function closure(start: string, follow: (to: MetaImport) => boolean): Set<string> {
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const chunk = queue.pop()!;
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    for (const to of meta.outputs[chunk]?.imports ?? []) {
      if (to.external || !follow(to)) continue;
      // Output import paths are relative to the output directory, spelled like the keys.
      const key = Object.keys(meta.outputs).find((name) => path.posix.normalize(name) === path.posix.normalize(to.path));
      if (key) queue.push(key);
    }
  }
  return seen;
}

const sourcesOf = (chunks: Iterable<string>): string[] => [...chunks].flatMap((chunk) => Object.keys(meta.outputs[chunk]!.inputs));
const librariesIn = (sources: readonly string[]): string[] =>
  INSTALLER_LIBRARIES.filter(([, pattern]) => sources.some((source) => pattern.test(source))).map(([name]) => name);

test("the build is the release build: split into chunks, the installer a lazy chunk of its own", () => {
  expect(entryChunk).toBeDefined();
  expect(Object.keys(meta.outputs).length).toBeGreaterThan(3);
  expect(meta.outputs[entryChunk]!.imports.some((to) => to.kind === "dynamic-import")).toBe(true);
  expect(Object.values(meta.outputs).some((out) => out.entryPoint === INSTALLER_ENTRY)).toBe(true);
});

test("what every hook evaluates imports only the built-ins every hook uses", () => {
  const eager = closure(entryChunk, (to) => to.kind === "import-statement");
  // A source's external static imports are the built-ins (its lazy imports are listed as
  // external chunks, which the closure above already judged).
  const builtins = sourcesOf(eager).flatMap((source) =>
    (meta.inputs[source]?.imports ?? []).filter((to) => to.external && to.kind === "import-statement" && !to.path.startsWith("./")).map((to) => to.path.replace(/^node:/, "")),
  );
  expect([...new Set(builtins)].sort()).toEqual(HOOK_PATH_BUILTINS);
});

test("no hook can evaluate zod, @iarna/toml or jsonc-parser; only the installer's lazy chunk holds them", () => {
  const isInstaller = (to: MetaImport) => meta.outputs[Object.keys(meta.outputs).find((name) => path.posix.normalize(name) === path.posix.normalize(to.path)) ?? ""]?.entryPoint === INSTALLER_ENTRY;
  // Every chunk a hook can reach: static and lazy imports alike, except the installer's.
  const hookReachable = closure(entryChunk, (to) => !(to.kind === "dynamic-import" && isInstaller(to)));
  expect(librariesIn(sourcesOf(hookReachable))).toEqual([]);
  // Positive control: the same detection finds all three once the installer's import is followed.
  expect(librariesIn(sourcesOf(closure(entryChunk, () => true)))).toEqual(INSTALLER_LIBRARIES.map(([name]) => name));
});
