// docs/contract.md §2, §12: a hook must not pay for code it does not run. The binary is built here exactly
// as the release builds it (scripts/build.ts's compileBinary and COMPILE_FLAGS: --compile
// --minify --bytecode --splitting …), with Bun's metafile beside it, and the module graph of
// that very build is checked:
// - what every hook evaluates (the entry chunk and its static imports) imports only the
//   built-ins every hook needs: one static `node:crypto` anywhere on it cost ~2 ms of a ~5 ms hook;
// - no hook can evaluate zod, @iarna/toml or jsonc-parser: they are reachable only through the
//   installer's lazy import, which no `<host> <event>` takes.
// - each event evaluates only its own rules: the always-evaluated chunks hold no event rule, and
//   Stop, PreCompact and the edit guard never evaluate the daemon probe or the compressor;
// - no hook makes the engine JIT-compile anything the I/O floor (scripts/bench/io-floor.ts, same
//   flags) does not: a hot loop on the hook path (the cksum table once cost ~1–3 ms of a ~10 ms
//   hook in compilation, docs/performance/2026-12-02-io-floor.md) shows up in BUN_JSC_reportCompileTimes.
// A test bundle without the release flags (the earlier version of this file) cannot see either:
// the chunks and their import kinds exist only in the split build (docs/performance/2026-12-02-io-floor.md).
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type BenchCase, LEARNING_CASES, LIFECYCLE_CASES, makeBenchWorkspace } from "../scripts/bench/hook-cases.ts";
import { compileBinary, packageVersion, versionDefine } from "../scripts/build.ts";
import { HOSTS } from "../src/hosts/index.ts";
import { HOST_LOADERS } from "../src/hosts/loaders.ts";
import { loadPayload, makeSandbox, REPO_ROOT, writeConfig } from "./support/hook-runner.ts";

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
  readonly outputs: Record<
    string,
    { readonly inputs: Record<string, unknown>; readonly imports: readonly MetaImport[]; readonly entryPoint?: string }
  >;
}

let dir: string;
let meta: Metafile;
let entryChunk: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-hotpath-"));
  const metafile = path.join(dir, "meta.json");
  compileBinary(path.join(REPO_ROOT, "src", "cli.ts"), path.join(dir, "velesdb-hooks"), [
    ...versionDefine(packageVersion()),
    `--metafile=${metafile}`,
  ]);
  compileBinary(path.join(REPO_ROOT, "scripts", "bench", "io-floor.ts"), path.join(dir, "io-floor"));
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
      const key = Object.keys(meta.outputs).find(
        (name) => path.posix.normalize(name) === path.posix.normalize(to.path),
      );
      if (key) queue.push(key);
    }
  }
  return seen;
}

const sourcesOf = (chunks: Iterable<string>): string[] =>
  [...chunks].flatMap((chunk) => Object.keys(meta.outputs[chunk]!.inputs));
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
    (meta.inputs[source]?.imports ?? [])
      .filter((to) => to.external && to.kind === "import-statement" && !to.path.startsWith("./"))
      .map((to) => to.path.replace(/^node:/, "")),
  );
  expect([...new Set(builtins)].sort()).toEqual(HOOK_PATH_BUILTINS);
});

test("no hook can evaluate zod, @iarna/toml or jsonc-parser; only the installer's lazy chunk holds them", () => {
  const isInstaller = (to: MetaImport) =>
    meta.outputs[
      Object.keys(meta.outputs).find((name) => path.posix.normalize(name) === path.posix.normalize(to.path)) ?? ""
    ]?.entryPoint === INSTALLER_ENTRY;
  // Every chunk a hook can reach: static and lazy imports alike, except the installer's.
  const hookReachable = closure(entryChunk, (to) => !(to.kind === "dynamic-import" && isInstaller(to)));
  expect(librariesIn(sourcesOf(hookReachable))).toEqual([]);
  // Positive control: the same detection finds all three once the installer's import is followed.
  expect(librariesIn(sourcesOf(closure(entryChunk, () => true)))).toEqual(INSTALLER_LIBRARIES.map(([name]) => name));
});

/** eagerSourcesOf("src/core/guard.ts") → every source evaluated when that module's chunk is imported (its static closure). */
function eagerSourcesOf(entryPoint: string): string[] {
  const chunk = Object.keys(meta.outputs).find((name) => meta.outputs[name]!.entryPoint === entryPoint);
  if (!chunk) throw new Error(`no chunk for ${entryPoint}`);
  return sourcesOf(closure(chunk, (to) => to.kind === "import-statement"));
}

/**
 * What every hook evaluates with the entry (src/hosts/loaders.ts imports it): the shared hook
 * runtime every host module is built on, and the first step of the rules nearly every tool event
 * runs (recall evidence's name check, the edit guard's opt-in walk, the compression gates). Kept
 * in the entry's chunk: each chunk a hook loads on its own costs the engine heap blocks, and past
 * its 64th block the engine starts a warm-up thread (docs/performance/2026-12-02-bench-guard.md).
 */
const SHARED_RUNTIME = [
  "src/hosts/host.ts",
  "src/hosts/descriptors/descriptor.ts",
  "src/hosts/tool-events.ts",
  "src/core/recall.ts",
  "src/core/compress-gates.ts",
  "src/core/guard.ts",
  "src/core/identity.ts",
];

/** The rules only some events run: never evaluated with the entry, each loaded by its own event. */
const LAZY_RULES = [
  "src/core/lifecycle.ts",
  "src/core/checkpoint.ts",
  "src/core/claim.ts",
  "src/core/records.ts",
  "src/core/evidence.ts",
  "src/core/guard-verdict.ts",
  "src/core/memory-down.ts",
  "src/core/texts.ts",
  "src/core/freshness.ts",
  "src/core/compress.ts",
  "src/core/watchdog.ts",
  "src/core/compiler.ts",
];

test("a hook evaluates one host module: the entry loads hosts lazily, from a table that matches src/hosts/index.ts", async () => {
  expect(Object.keys(HOST_LOADERS)).toEqual(Object.keys(HOSTS));
  for (const [name, load] of Object.entries(HOST_LOADERS))
    expect(await load()).toBe((HOSTS as Record<string, Awaited<ReturnType<typeof load>>>)[name]!);
  const hostModules = Object.keys(HOSTS).map((name) => `src/hosts/${name}.ts`);
  const eager = eagerSourcesOf("src/cli.ts");
  expect(eager.filter((source) => hostModules.includes(source))).toEqual([]);
  // Positive control: each host module is in the build, as a chunk the entry imports lazily.
  for (const module of hostModules)
    expect(Object.values(meta.outputs).some((out) => out.entryPoint === module)).toBe(true);
});

/** chunkHolding("src/hosts/claude.ts") → the sources of the output chunk that holds that source. */
function chunkHolding(source: string): string[] {
  const chunk = Object.keys(meta.outputs).find((out) => Object.hasOwn(meta.outputs[out]!.inputs, source));
  if (!chunk) throw new Error(`no chunk holds ${source}`);
  return Object.keys(meta.outputs[chunk]!.inputs);
}

test("the entry holds the shared hook runtime, and each host's descriptor shares its hook module's chunk", () => {
  const eager = eagerSourcesOf("src/cli.ts");
  expect(SHARED_RUNTIME.filter((source) => !eager.includes(source))).toEqual([]);
  // The installer takes each descriptor through its host module (docs/development/architecture.md, "One descriptor per host"):
  // imported directly, a descriptor became a chunk of its own, one more for every hook to load.
  for (const name of Object.keys(HOSTS))
    expect(`${name}: ${chunkHolding(`src/hosts/${name}.ts`).includes(`src/hosts/descriptors/${name}.ts`)}`).toBe(
      `${name}: true`,
    );
  // A hook loads the entry's two chunks, its host's (the lazy import's own small chunk, then the
  // one holding the module), and at most two more that its host module imports statically
  // (texts.ts for the hosts whose encoder words a refusal itself, the host module another host
  // builds on: dsh's is Codex's).
  for (const name of Object.keys(HOSTS)) {
    const chunk = Object.keys(meta.outputs).find((out) => meta.outputs[out]!.entryPoint === `src/hosts/${name}.ts`)!;
    const loaded = new Set([
      ...closure(entryChunk, (to) => to.kind === "import-statement"),
      ...closure(chunk, (to) => to.kind === "import-statement"),
    ]);
    expect(`${name}: ${loaded.size} chunks`).toBe(`${name}: ${Math.min(loaded.size, 6)} chunks`);
  }
});

test("each event evaluates its own rules only", () => {
  const allSources = sourcesOf(Object.keys(meta.outputs));
  // Positive control: every rule listed is in the build, so its absence below means something.
  for (const rule of [...LAZY_RULES, ...SHARED_RUNTIME]) expect(allSources).toContain(rule);
  expect(eagerSourcesOf("src/cli.ts").filter((source) => LAZY_RULES.includes(source))).toEqual([]);
  const notFor = (entryPoint: string, rules: readonly string[]) =>
    eagerSourcesOf(entryPoint).filter((source) => rules.includes(source));
  // Stop and PreCompact share lifecycle.ts with SessionStart; only SessionStart probes the daemon.
  expect(
    notFor("src/core/checkpoint.ts", ["src/core/freshness.ts", "src/core/compress.ts", "src/core/watchdog.ts"]),
  ).toEqual([]);
  expect(
    notFor("src/core/lifecycle.ts", ["src/core/freshness.ts", "src/core/checkpoint.ts", "src/core/compress.ts"]),
  ).toEqual([]);
  // The recall-evidence rule and what it reads come only once a tool's name is a recall's; it
  // does not evaluate the edit guard's verdict or the lifecycle rules.
  expect(
    notFor("src/core/evidence.ts", [
      "src/core/freshness.ts",
      "src/core/lifecycle.ts",
      "src/core/checkpoint.ts",
      "src/core/compress.ts",
      "src/core/guard-verdict.ts",
    ]),
  ).toEqual([]);
  expect(eagerSourcesOf("src/core/evidence.ts")).toEqual(expect.arrayContaining(["src/core/records.ts"]));
  // A Bash result goes through the payload-only gates first: the host chunk that runs them
  // evaluates neither the compressor, its watchdog and compiler client, nor the recall-evidence
  // rule, which Bash never feeds (docs/performance/2026-12-02-io-floor.md).
  const compressor = ["src/core/compress.ts", "src/core/watchdog.ts", "src/core/compiler.ts", "src/core/evidence.ts"];
  expect(notFor("src/hosts/claude.ts", compressor)).toEqual([]);
  // The deadline is derived from the registered timeout inside the compressor, so a small
  // output, answered by the gates, evaluates nothing for it (control: the compressor's chunk does).
  expect(notFor("src/hosts/claude.ts", ["src/core/host-timeouts.ts"])).toEqual([]);
  expect(eagerSourcesOf("src/cli.ts").includes("src/core/host-timeouts.ts")).toBe(false);
  expect(eagerSourcesOf("src/core/compress.ts")).toContain("src/core/host-timeouts.ts");
  // Positive control of the detection: the compressor's chunk does evaluate the watchdog.
  expect(eagerSourcesOf("src/core/compress.ts")).toContain("src/core/watchdog.ts");
  // The shared-memory front and broker (docs/shared-memory.md) run only as `velesdb-hooks mcp`:
  // no hook evaluates them; the guard reads the broker's status through src/core/mcp-runtime.ts alone.
  const shared = ["src/mcp/front.ts", "src/mcp/broker.ts", "src/mcp/channel.ts", "src/mcp/lines.ts"];
  for (const rule of ["src/core/guard-verdict.ts", "src/core/evidence.ts", "src/hosts/claude.ts", "src/hosts/codex.ts"])
    expect(notFor(rule, shared)).toEqual([]);
  expect(
    eagerSourcesOf("src/cli.ts").filter((source) => shared.includes(source) || source === "src/core/mcp-runtime.ts"),
  ).toEqual([]);
  // Positive control: the front's own chunk evaluates the channel and the framing.
  expect(eagerSourcesOf("src/mcp/front.ts")).toEqual(
    expect.arrayContaining(["src/mcp/channel.ts", "src/mcp/lines.ts", "src/core/mcp-runtime.ts"]),
  );
  // An edit outside an opted-in repository (what a user-wide install mostly sees) stops in
  // guard.ts: the verdict's texts, records and memory-down rule come only for a guarded one.
  const verdict = ["src/core/texts.ts", "src/core/records.ts", "src/core/memory-down.ts", "src/core/mcp-runtime.ts"];
  expect(eagerSourcesOf("src/cli.ts").filter((source) => verdict.includes(source))).toEqual([]);
  // Positive control: the verdict's chunk evaluates them.
  expect(eagerSourcesOf("src/core/guard-verdict.ts")).toEqual(expect.arrayContaining(verdict));
});

/**
 * compiledFunctions(binary, args, payload, env) → `name#hash` of every function the engine JIT-compiled in that run.
 * The compilations run on the main thread (useConcurrentJIT=0): a compile the engine's JIT thread
 * had not finished when the process exited printed nothing, so a loaded machine could hide a
 * compile from this test, and once left the positive control below with no line at all (CI).
 */
function compiledFunctions(
  binary: string,
  args: readonly string[],
  payload: unknown,
  env: Record<string, string>,
  cwd: string,
): string[] {
  const run = runWithPayload(
    [binary, ...args],
    payload,
    { ...env, BUN_JSC_reportCompileTimes: "1", BUN_JSC_useConcurrentJIT: "0" },
    cwd,
  );
  return [...run.stderr.toString().matchAll(/^Optimized (\S+):/gm)].map((m) => m[1]!);
}

/** runWithPayload(command, payload, env, cwd) → the finished run of a hook (or of a tracer running one); it must exit 0 or 2. */
function runWithPayload(command: readonly string[], payload: unknown, env: Record<string, string>, cwd: string) {
  const run = Bun.spawnSync([...command], {
    stdin: Buffer.from(JSON.stringify(payload)),
    env,
    cwd,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0 && run.exitCode !== 2)
    throw new Error(`${command.join(" ")} exited ${run.exitCode}: ${run.stderr.toString()}`);
  return run;
}

test("no hook JIT-compiles anything the I/O floor does not", () => {
  const box = makeSandbox("hotpath-jit");
  try {
    writeConfig(box.workspace, { project: "hot", enforce_learning_loop: true });
    const at = (host: string, name: string, overrides: Record<string, unknown> = {}) =>
      loadPayload(host, name, { cwd: box.workspace, ...overrides });
    const target = { file_path: path.join(box.workspace, "src", "a.ts"), content: "x" };
    const runs: Array<[readonly string[], Record<string, unknown>]> = [
      [["claude", "session-start"], at("claude", "session-start.startup")],
      [["claude", "stop"], at("claude", "stop.first")],
      [["claude", "pre-compact"], at("claude", "pre-compact.auto")],
      [["claude", "pre-tool-use"], at("claude", "pre-tool-use.write", { tool_input: target })],
      [["claude", "post-tool-use"], at("claude", "post-tool-use.recall-fused")],
      // The same edit again, now unlocked by that recall: the dirty record is written.
      [["claude", "pre-tool-use"], at("claude", "pre-tool-use.write", { tool_input: target })],
      [["codex", "session-start"], at("codex", "session-start.compact")],
      [["codex", "stop"], at("codex", "stop.first")],
      [["gemini", "before-tool"], at("gemini", "before-tool.write-file")],
    ];
    const floor = new Set(
      compiledFunctions(path.join(dir, "io-floor"), [], at("claude", "stop.first"), box.env, box.workspace),
    );
    for (const [args, payload] of runs) {
      const extra = compiledFunctions(path.join(dir, "velesdb-hooks"), args, payload, box.env, box.workspace).filter(
        (name) => !floor.has(name),
      );
      expect(`${args.join(" ")}: ${extra.join(", ")}`).toBe(`${args.join(" ")}: `);
    }
    // Positive control: with the engine's thresholds at their lowest, the same report names
    // functions (~100 in a Stop; at 5, about 10, which left too little margin).
    const forced = compiledFunctions(
      path.join(dir, "velesdb-hooks"),
      ["claude", "stop"],
      at("claude", "stop.first"),
      { ...box.env, BUN_JSC_thresholdForJITAfterWarmUp: "1", BUN_JSC_thresholdForJITSoon: "1" },
      box.workspace,
    );
    expect(forced.length).toBeGreaterThan(0);
  } finally {
    box.cleanup();
  }
}, 60_000);

/**
 * threadNamesOf(["claude", "stop"], payload, box) → the names of the threads the release build
 * started in that run, from `strace -f -e trace=prctl` (each engine thread names itself with
 * PR_SET_NAME). The run's cwd is the sandbox's workspace.
 */
function threadNamesOf(
  args: readonly string[],
  payload: unknown,
  box: { env: Record<string, string>; workspace: string },
): string[] {
  const log = path.join(dir, `threads-${args.join("-")}.strace`);
  const command = ["strace", "-f", "-qq", "-e", "trace=prctl", "-o", log, path.join(dir, "velesdb-hooks"), ...args];
  runWithPayload(command, payload, box.env, box.workspace);
  return [...fs.readFileSync(log, "utf8").matchAll(/PR_SET_NAME, "([^"]+)"/g)].map((m) => m[1]!);
}

// The engine starts a thread that pre-faults heap blocks once a process has allocated 64 of them
// (JavaScriptCore's warmUpMarkedBlockStartAfterBlocks); in a hook that lives ~7 ms it is pure
// cost, ~3–5% of its CPU with the scavenger thread it brings (docs/performance/2026-12-02-bench-guard.md).
// The commonest hooks (a small shell result, any other tool's result, an edit outside an
// opted-in repository) stay below that count: a module more per hook or a heavier shared
// runtime puts them over, which this test sees before the bench does.
test("the commonest hooks stay below the engine's heap warm-up thread", () => {
  if (!Bun.which("strace")) {
    if (process.env.CI === "true") throw new Error("strace is missing: .ci/run installs it");
    return;
  }
  // The hooks the bench holds to 1.15× (scripts/bench/hook-cases.ts, touchesState false), on its payloads.
  const commonest = [...LIFECYCLE_CASES, ...LEARNING_CASES].filter((c) => !c.touchesState);
  expect(commonest.length).toBeGreaterThanOrEqual(4);
  const ws = makeBenchWorkspace();
  try {
    const runOf = (c: BenchCase, extra: Record<string, string> = {}) => {
      c.before?.(ws);
      const box = { env: { ...ws.env, ...(c.env?.(ws) ?? {}), ...extra }, workspace: ws.repo };
      return threadNamesOf(c.args, JSON.parse(c.payload(ws)), box);
    };
    for (const c of commonest) expect(`${c.label}: ${runOf(c).join(" ")}`).toBe(`${c.label}: `);
    // Positive control: the same run with the engine told to start the thread at once names it.
    expect(runOf(commonest[0]!, { BUN_JSC_warmUpMarkedBlockStartAfterBlocks: "1" })).toContain("JSCWarmUp");
  } finally {
    fs.rmSync(ws.root, { recursive: true, force: true });
  }
}, 60_000);
