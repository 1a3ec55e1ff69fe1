// The property run shared by `bun test test/fuzz.test.ts` and `bun run fuzz`: generate payloads
// for one entry, run each through the compiled binary in its own sandbox (eight at a time), and
// check the invariants of docs/contract.md §3.4 and §10 on every answer. A failure is reported with the
// seed that reproduces it and written whole to dist/fuzz-failures/ for replay.
import fc from "fast-check";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parsePatchTargets } from "../../src/core/patch.ts";
import { REPO_ROOT } from "./hook-runner.ts";
import { judgeAnswer, stackTraceIn, isObject, type Entry, type Judged } from "./fuzz-entries.ts";
import { describeCase, encodeCase, fuzzCase, PERSISTED_OUTPUT, type FuzzCase } from "./fuzz-payloads.ts";
import {
  FAKE_COMPILER,
  isInside,
  makeFuzzSandbox,
  resolvedCwd,
  SANDBOX_TOKEN,
  snapshot,
  snapshotChanges,
  spawnHook,
  type FuzzSandbox,
  type Snapshot,
} from "./fuzz-sandbox.ts";

/** Payloads per property run, generated together: part of what a seed means, so it never varies. */
export const BATCH = 16;
/** Hook processes at once (VELESDB_FUZZ_JOBS); changes speed, never which payloads are generated. */
export const DEFAULT_JOBS = 6;
/**
 * Payloads per entry when VELESDB_FUZZ_RUNS is unset: enough for every entry to reach each
 * invariant's checked branch (COVERAGE_FLOORS, asserted by test/fuzz.test.ts) in a CI run of a
 * few minutes. Deep exploration (tens of thousands, random seeds) is `bun run fuzz` and the
 * scheduled workflow .github/workflows/fuzz.yml.
 */
export const DEFAULT_RUNS = 208;
export const DEFAULT_BOUND_MS = 5000;

export interface FuzzSettings {
  readonly seed: number;
  readonly count: number;
  readonly boundMs: number;
  /** Shrink a failure to a smaller batch (slow: every step runs processes). */
  readonly shrink: boolean;
  readonly jobs: number;
}

/**
 * fuzzSettings(env) → seed, count and bound from VELESDB_FUZZ_SEED / _RUNS / _BOUND_MS. The seed
 * is random unless set, and always printed, so every CI run explores new payloads and any
 * failure can be replayed exactly.
 */
export function fuzzSettings(env: NodeJS.ProcessEnv = process.env): FuzzSettings {
  const int = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return fallback;
    if (!/^-?\d{1,10}$/.test(raw)) throw new Error(`${name}=${JSON.stringify(raw)} is not an integer`);
    return Number(raw);
  };
  return {
    seed: int("VELESDB_FUZZ_SEED", Number(BigInt.asIntN(32, BigInt(Math.floor(Math.random() * 2 ** 32))))) | 0,
    count: int("VELESDB_FUZZ_RUNS", DEFAULT_RUNS),
    boundMs: int("VELESDB_FUZZ_BOUND_MS", DEFAULT_BOUND_MS),
    shrink: env.VELESDB_FUZZ_SHRINK === "1",
    jobs: Math.max(1, int("VELESDB_FUZZ_JOBS", DEFAULT_JOBS)),
  };
}

/**
 * coverageFloors(entry) → each checked branch this entry's run must reach, with its floor. A
 * generator that drifted into producing only garbage would keep every invariant trivially;
 * these floors make a short run prove it still reached the answers and inputs that matter.
 * Each floor is far below its expected count at DEFAULT_RUNS (measured with seed 12345: the
 * rarest, claude/post-tool-use's two replacement forms, 7 and 8 of 208), so a random seed
 * misses one with a chance below e^-6.
 */
export function coverageFloors(entry: Entry): Record<string, number> {
  const floors: Record<string, number> = {
    "input:object": 1,
    "input:json-not-object": 1,
    "input:text": 1,
    "input:bytes": 1,
    "input:deep": 1,
  };
  if (entry.dialect !== "windsurf") floors["input:payload-cwd"] = 1;
  switch (entry.hookClass) {
    case "lifecycle":
      floors["answer:context"] = 1;
      break;
    case "precompact":
      floors["answer:instructions"] = 1;
      floors["state:written"] = 1;
      break;
    case "stop":
      floors["answer:continue"] = 1;
      floors["state:written"] = 1;
      break;
    case "guard":
      Object.assign(floors, {
        "answer:deny": 1,
        "answer:pass": 1,
        "guard:edit-in-opted-in-repo": 1,
        "guard:edit-elsewhere": 1,
        "state:written": 1,
      });
      break;
    case "posttooluse":
      floors["answer:pass"] = 1;
      // Only Claude's Bash results are compressed (docs/contract.md §7): both archive forms are checked there.
      if (entry.dialect === "claude")
        Object.assign(floors, { "answer:replace": 1, "replace:own-archive": 1, "replace:host-persisted": 1 });
      break;
  }
  return floors;
}

/** coverageShortfall(entry, reached) → one line per branch reached fewer times than its floor. */
export function coverageShortfall(entry: Entry, reached: Readonly<Record<string, number>>): string[] {
  return Object.entries(coverageFloors(entry))
    .filter(([label, floor]) => (reached[label] ?? 0) < floor)
    .map(([label, floor]) => `${entry.id}: ${label} reached ${reached[label] ?? 0} time(s), floor ${floor}`);
}

/** entrySeed(seed, "claude/stop") → the entry's own seed: entries explore independently. */
export function entrySeed(seed: number, entryId: string): number {
  let hash = 0x811c9dc5;
  for (const ch of entryId) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193);
  return (seed ^ hash) | 0;
}

export interface CaseResult {
  readonly violations: string[];
  readonly answer?: Judged;
  readonly elapsedMs: number;
  /** Which checked branches this case exercised (COVERAGE_FLOORS names them). */
  readonly reached: readonly string[];
}

/** The environment every fuzzed hook gets on top of the sandbox's: a capable compiler, low size gate. */
const FUZZ_ENV = { VELESDB_MEMORY_BIN: FAKE_COMPILER, VELESDB_HOOK_MIN_BYTES: "1024" };
const PERSISTED_CONTENT = Array.from({ length: 2000 }, (_, i) => `persisted line ${i}: Compiling crate ${i % 17}`).join(
  "\n",
);

/**
 * A reusable sandbox. Creating and deleting a tree per payload cost more than the hook itself,
 * so each worker keeps one: its baseline snapshot is taken once, every case is checked against
 * it, and only the state directories are removed between cases. A case that broke an invariant
 * may have left anything behind, so its sandbox is thrown away and the next case gets a new one.
 */
export class SandboxSlot {
  private box: FuzzSandbox | undefined;
  private baseline: Snapshot | undefined;

  constructor(private readonly parent: string) {}

  /** slot.run(entry, case, boundMs) → the invariant violations of one hook process (none: []). */
  async run(entry: Entry, c: FuzzCase, boundMs: number): Promise<CaseResult> {
    if (!this.box || !this.baseline) {
      this.box = makeFuzzSandbox("fz", { parent: this.parent, env: FUZZ_ENV });
      const persisted = PERSISTED_OUTPUT.replace(SANDBOX_TOKEN, this.box.root);
      fs.mkdirSync(path.dirname(persisted), { recursive: true });
      fs.writeFileSync(persisted, PERSISTED_CONTENT);
      this.baseline = snapshot(this.box.root, []);
    }
    const box = this.box;
    const result = await runCaseIn(box, this.baseline, entry, c, boundMs);
    if (result.violations.length > 0 || !removeAll(result.stateDirs)) this.discard();
    return result;
  }

  discard(): void {
    this.box?.cleanup();
    this.box = undefined;
    this.baseline = undefined;
  }
}

/** removeAll(dirs) → true when every directory is gone (a name too long to exist is gone too). */
function removeAll(dirs: readonly string[]): boolean {
  let ok = true;
  for (const dir of dirs) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENAMETOOLONG") ok = false;
    }
  }
  return ok;
}

/** runCase(entry, case, boundMs, parent) → one case in a sandbox of its own (for replays). */
export async function runCase(entry: Entry, c: FuzzCase, boundMs: number, parent: string): Promise<CaseResult> {
  const slot = new SandboxSlot(parent);
  try {
    return await slot.run(entry, c, boundMs);
  } finally {
    slot.discard();
  }
}

async function runCaseIn(
  box: FuzzSandbox,
  before: Snapshot,
  entry: Entry,
  c: FuzzCase,
  boundMs: number,
): Promise<CaseResult & { stateDirs: string[] }> {
  const stdin = encodeCase(c, box.root);
  const persistedFile = PERSISTED_OUTPUT.replace(SANDBOX_TOKEN, box.root);
  const payload = parseLikeTheHook(stdin);
  const processCwd = c.processCwd === "repo" ? box.repo : box.plain;
  const cwd = resolvedCwd(payload, processCwd);
  const env = { ...box.env };
  const excluded = [box.stateDir];
  if (entry.dialect === "dsh") {
    // The DeepSeek bridge keeps state in `<cwd>/.velesdb-hooks/`. A cwd outside the sandbox
    // would put it on this machine: there, the state goes to the sandbox through the override.
    if (isInside(cwd, box.root)) excluded.push(path.join(cwd, ".velesdb-hooks"));
    else env.VELESDB_HOOKS_STATE_DIR = box.stateDir;
  }
  const run = await spawnHook([entry.host, entry.event], stdin, { env, cwd: processCwd, boundMs });
  const violations: string[] = [];
  if (run.timedOut) violations.push(`did not finish within ${boundMs} ms`);
  else if (run.signal) violations.push(`killed by ${run.signal}`);
  const trace = stackTraceIn(run.stdout);
  if (trace) violations.push(`stack trace on stdout (${trace})`);
  let answer: Judged | undefined;
  if (!run.timedOut) {
    const judged = judgeAnswer(entry, run);
    if (judged.ok) answer = judged.answer;
    else violations.push(...judged.problems);
  }
  const reached = inputLabels(c, stdin, payload);
  if (env.VELESDB_HOOKS_STATE_DIR !== undefined) reached.push("dsh:state-moved-into-sandbox");
  if (answer) {
    reached.push(`answer:${answer.kind}`);
    violations.push(...guardViolations(entry, payload, cwd, box, answer, reached));
    violations.push(...postToolUseViolations(entry, payload, box, answer, persistedFile, reached));
  }
  if (excluded.some((dir) => fs.existsSync(dir))) reached.push("state:written");
  const changes = snapshotChanges(withoutExcluded(before, box.root, excluded), snapshot(box.root, excluded));
  if (changes.length > 0) violations.push(`wrote outside the state directory: ${changes.slice(0, 5).join(", ")}`);
  return { violations, answer, elapsedMs: run.elapsedMs, reached, stateDirs: excluded };
}

/** inputLabels(case, stdin, payload) → what kind of input this was, for the coverage floors. */
function inputLabels(c: FuzzCase, stdin: Uint8Array, payload: Record<string, unknown>): string[] {
  const labels: string[] = [];
  if (c.form === "bytes") labels.push("input:bytes");
  else if (c.form === "text") labels.push("input:text");
  else labels.push(isObject(c.payload) ? "input:object" : "input:json-not-object");
  if (c.form === "object" && isObject(c.payload) && typeof payload.cwd === "string") labels.push("input:payload-cwd");
  if (stdin.length > 1_000_000) labels.push("input:huge");
  // Nesting past what a recursive serialiser survives (the seed-12345 defect of fuzz-regressions).
  const head = Buffer.from(stdin.subarray(0, 200_000)).toString("latin1");
  if (/\[{50}|(\{"[ad]":){50}/.test(head)) labels.push("input:deep");
  return labels;
}

function withoutExcluded(shot: Snapshot, root: string, excluded: readonly string[]): Snapshot {
  const rel = excluded.map((dir) => path.relative(root, dir));
  return new Map([...shot].filter(([p]) => !rel.some((ex) => p === ex || p.startsWith(`${ex}/`))));
}

/** parseLikeTheHook(bytes) → the payload object the hook reads (docs/contract.md §3.1), or {} for anything else. */
function parseLikeTheHook(bytes: Uint8Array): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes));
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

// The guard oracle (docs/contract.md §6.1): which directories decide the edit's policy. Written from the
// spec, not from src/core/guard.ts; only the apply_patch grammar is shared (it has its own tests).
const CLAUDE_TARGET_FIELD: Readonly<Record<string, string>> = {
  Edit: "file_path",
  Write: "file_path",
  NotebookEdit: "notebook_path",
};
const QWEN_TARGET_FIELD: Readonly<Record<string, string>> = {
  edit: "file_path",
  write_file: "file_path",
  notebook_edit: "notebook_path",
};
const DSH_EDIT_TOOLS = new Set(["edit", "write", "str_replace_editor"]);
const DROID_TARGET_FIELD: Readonly<Record<string, string>> = {
  Create: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
};
const CODEBUDDY_TARGET_FIELD: Readonly<Record<string, string>> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};
const OPENCODE_TARGET_FIELD: Readonly<Record<string, string>> = {
  write: "filePath",
  edit: "filePath",
  patch: "filePath",
  multiedit: "filePath",
};
const PI_TARGET_FIELD: Readonly<Record<string, string>> = { write: "path", edit: "path" };

function guardStarts(entry: Entry, payload: Record<string, unknown>, cwd: string): string[] | undefined {
  if (entry.hookClass !== "guard") return undefined;
  const sent = payload.hook_event_name;
  if (entry.payloadNamesEvent && typeof sent === "string" && sent !== "" && sent !== entry.wireName) return undefined;
  const str = (holder: unknown, key: string): string | undefined => {
    const value = isObject(holder) ? holder[key] : undefined;
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const tool = str(payload, "tool_name");
  let targets: string[];
  switch (entry.dialect) {
    case "claude":
    case "codebuddy":
    case "droid":
    case "qwen": {
      const tables: Readonly<Record<string, Readonly<Record<string, string>>>> = {
        claude: CLAUDE_TARGET_FIELD,
        codebuddy: CODEBUDDY_TARGET_FIELD,
        droid: DROID_TARGET_FIELD,
      };
      const table = tables[entry.dialect] ?? QWEN_TARGET_FIELD;
      if (tool === undefined || !Object.hasOwn(table, tool)) return undefined;
      const target = str(payload.tool_input, table[tool]!);
      targets = target === undefined ? [] : [target];
      break;
    }
    case "codex": {
      if (tool === "apply_patch") targets = parsePatchTargets(str(payload.tool_input, "command") ?? "");
      else if (tool === "Edit" || tool === "Write") {
        const target = str(payload.tool_input, "file_path");
        targets = target === undefined ? [] : [target];
      } else return undefined;
      break;
    }
    case "windsurf": {
      const target = str(payload.tool_info, "file_path");
      targets = target === undefined ? [] : [target];
      break;
    }
    case "dsh":
      if (tool === undefined || !DSH_EDIT_TOOLS.has(tool)) return undefined;
      targets = [];
      break;
    case "gemini": {
      if (tool !== "write_file" && tool !== "replace") return undefined;
      const target = str(payload.tool_input, "file_path");
      targets = target === undefined ? [] : [target];
      break;
    }
    case "pi": {
      if (tool === undefined || !Object.hasOwn(PI_TARGET_FIELD, tool)) return undefined;
      const target = str(payload.tool_input, PI_TARGET_FIELD[tool]!);
      targets = target === undefined ? [] : [target];
      break;
    }
    case "opencode": {
      if (tool === "apply_patch") targets = parsePatchTargets(str(payload.tool_input, "patchText") ?? "");
      else if (tool !== undefined && Object.hasOwn(OPENCODE_TARGET_FIELD, tool)) {
        const target = str(payload.tool_input, OPENCODE_TARGET_FIELD[tool]!);
        targets = target === undefined ? [] : [target];
      } else return undefined;
      break;
    }
    case "copilot": {
      const copilotTool = str(payload, "toolName");
      if (copilotTool === "apply_patch")
        targets = parsePatchTargets(typeof payload.toolArgs === "string" ? payload.toolArgs : "");
      else if (copilotTool === "edit" || copilotTool === "create") {
        const target = str(payload.toolArgs, "path");
        targets = target === undefined ? [] : [target];
      } else return undefined;
      break;
    }
    default:
      // Kilo speaks OpenCode's dialect (fuzz-entries.ts DIALECT_OF): never its own here.
      throw new Error(`fuzz-harness: no guard oracle for the ${entry.dialect} dialect`);
  }
  return targets.length > 0 ? targets.map((t) => path.dirname(path.resolve(cwd, t))) : [cwd];
}

/** In the opted-in repository, with no recall in this fresh sandbox, the guard never passes. */
function guardViolations(
  entry: Entry,
  payload: Record<string, unknown>,
  cwd: string,
  box: FuzzSandbox,
  answer: Judged,
  reached: string[],
): string[] {
  const starts = guardStarts(entry, payload, cwd);
  if (starts === undefined) return [];
  const guarded = starts.some((dir) => isInside(dir, box.repo));
  reached.push(guarded ? "guard:edit-in-opted-in-repo" : "guard:edit-elsewhere");
  if (guarded && answer.kind !== "deny")
    return [`guard answered ${answer.kind} for an edit in the opted-in repository without a recall`];
  return [];
}

/** OpenCode bash: the compiled text names an archive (0600, ours) whose stdout is the complete original output. */
function opencodeReplacementViolations(
  original: Record<string, unknown>,
  out: Record<string, unknown>,
  archiveDir: string,
  archives: string[],
): string[] {
  const match = /saved at ("(?:[^"\\]|\\.)*")/.exec(String(out.output));
  if (!match) return ["the replacement has no archive path in its footer"];
  const archive = JSON.parse(match[1]!) as string;
  if (!isInside(archive, archiveDir)) return [`archive ${archive} is outside ${archiveDir}`];
  const problems: string[] = [];
  try {
    const st = fs.lstatSync(archive);
    if (!st.isFile() || (st.mode & 0o777) !== 0o600) problems.push(`archive ${archive} is not a 0600 regular file`);
    const stored = JSON.parse(fs.readFileSync(archive, "utf8")) as Record<string, unknown>;
    if (stored.stdout !== original.output)
      problems.push(`archive ${archive} does not hold the complete original output`);
  } catch (error) {
    return [`archive ${archive} cannot be read back: ${(error as Error).message}`];
  }
  if (archives.length !== 1) problems.push(`${archives.length} archives for one replacement`);
  return problems;
}

/** Copilot bash: the same result type, the compiled text ending in the original `<shellId …>` footer, an archive of the output. */
function copilotReplacementViolations(
  payload: Record<string, unknown>,
  out: Record<string, unknown>,
  archiveDir: string,
  archives: string[],
): string[] {
  const result = isObject(payload.toolResult) ? payload.toolResult : {};
  const original = String(result.textResultForLlm);
  const footer = /\n<shellId: [^\n]*>\s*$/.exec(original);
  const problems: string[] = [];
  if (out.resultType !== result.resultType) problems.push("the replacement changed the result type");
  if (!footer || !String(out.textResultForLlm).endsWith(footer[0]))
    problems.push("the replacement lost the <shellId …> footer");
  const violations = opencodeReplacementViolations(
    { output: footer ? original.slice(0, footer.index) : original },
    { output: out.textResultForLlm },
    archiveDir,
    archives,
  );
  return [...problems, ...violations];
}

/** PostToolUse: {} or a replacement whose archive holds the complete original; no archive left behind on a pass. */
function postToolUseViolations(
  entry: Entry,
  payload: Record<string, unknown>,
  box: FuzzSandbox,
  answer: Judged,
  persistedFile: string,
  reached: string[],
): string[] {
  if (entry.hookClass !== "posttooluse") return [];
  if (answer.kind === "replace")
    reached.push(
      typeof (isObject(payload.tool_response) ? payload.tool_response.persistedOutputPath : undefined) === "string"
        ? "replace:host-persisted"
        : "replace:own-archive",
    );
  const archiveDir = path.join(box.stateDir, "tool-output");
  const archives = fs.existsSync(archiveDir) ? fs.readdirSync(archiveDir) : [];
  if (answer.kind === "pass")
    return archives.length > 0 ? [`passed but left ${archives.length} archive(s) behind`] : [];
  if (answer.kind !== "replace" || !answer.replacement) return [`PostToolUse answered ${answer.kind}`];
  // Copilot's result is `toolResult`, the other hosts' `tool_response`.
  if (entry.dialect === "copilot")
    return copilotReplacementViolations(payload, answer.replacement, archiveDir, archives);
  const original = payload.tool_response;
  if (!isObject(original)) return ["replaced a tool_response that is not an object"];
  const out = answer.replacement;
  const problems: string[] = [];
  const { stdout: _s, stderr: oldStderr, persistedOutputPath: persisted, persistedOutputSize: _z, ...kept } = original;
  const { stdout: newStdout, stderr: newStderr, ...keptOut } = out;
  // OpenCode's bash answer is the new `output` text alone; the archive holds the original text
  // as its stdout (src/hosts/opencode.ts).
  if (entry.dialect === "opencode") return opencodeReplacementViolations(original, out, archiveDir, archives);
  // Pi's bash answer is the new text alone; the archive holds the one text block's output (src/hosts/pi.ts).
  if (entry.dialect === "pi") {
    const content = Array.isArray(original.content) ? original.content : [];
    return opencodeReplacementViolations(
      { output: isObject(content[0]) ? content[0].text : undefined },
      out,
      archiveDir,
      archives,
    );
  }
  if (!Bun.deepEquals(kept, keptOut, true))
    problems.push("the replacement did not keep every other field of the original");
  // Claude's stderr moves into the view (the model read both streams): emptied, never dropped with its key.
  if (typeof oldStderr === "string" && newStderr !== "")
    problems.push("the replacement's stderr is not emptied (the view holds it)");
  const match = /saved at ("(?:[^"\\]|\\.)*")/.exec(String(newStdout));
  if (!match) return [...problems, "the replacement has no archive path in its footer"];
  const archive = JSON.parse(match[1]!) as string;
  if (typeof persisted === "string") {
    if (archive !== persisted) problems.push(`archive ${archive} is not the host's persisted output ${persisted}`);
    else if (!fs.existsSync(persistedFile) || fs.readFileSync(persistedFile, "utf8") !== PERSISTED_CONTENT)
      problems.push("the host's persisted output was changed");
    return problems;
  }
  if (!isInside(archive, archiveDir)) return [...problems, `archive ${archive} is outside ${archiveDir}`];
  let stored: unknown;
  try {
    const st = fs.lstatSync(archive);
    if (!st.isFile() || (st.mode & 0o777) !== 0o600) problems.push(`archive ${archive} is not a 0600 regular file`);
    stored = JSON.parse(fs.readFileSync(archive, "utf8"));
  } catch (error) {
    return [...problems, `archive ${archive} cannot be read back: ${(error as Error).message}`];
  }
  if (!Bun.deepEquals(stored, original, true))
    problems.push(`archive ${archive} does not hold the complete original tool_response`);
  if (archives.length !== 1) problems.push(`${archives.length} archives for one replacement`);
  return problems;
}

export interface EntryReport {
  readonly entry: Entry;
  readonly seed: number;
  readonly entrySeed: number;
  readonly cases: number;
  readonly kinds: Record<string, number>;
  /** How many cases exercised each checked branch (CaseResult.reached). */
  readonly reached: Record<string, number>;
  readonly slowestMs: number;
  readonly elapsedMs: number;
  /** Set when a property run failed: what went wrong, and where the whole batch was saved. */
  readonly failure?: { readonly message: string; readonly file: string };
}

/** fuzzEntry(entry, settings) → a report; count payloads in batches of BATCH, checked as one fast-check property. */
export async function fuzzEntry(entry: Entry, settings: FuzzSettings): Promise<EntryReport> {
  const started = performance.now();
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "vh-fuzz-"));
  const kinds: Record<string, number> = {};
  const reached: Record<string, number> = {};
  let cases = 0;
  let slowestMs = 0;
  let lastFailure: { batch: FuzzCase[]; results: CaseResult[] } | undefined;
  const seed = entrySeed(settings.seed, entry.id);
  const slots = Array.from({ length: settings.jobs }, () => new SandboxSlot(parent));
  const property = fc.asyncProperty(
    fc.array(fuzzCase(entry), { minLength: BATCH, maxLength: BATCH }),
    async (batch) => {
      const results: CaseResult[] = new Array(batch.length);
      let next = 0;
      await Promise.all(
        slots.map(async (slot) => {
          for (let i = next++; i < batch.length; i = next++)
            results[i] = await slot.run(entry, batch[i]!, settings.boundMs);
        }),
      );
      for (const r of results) {
        cases++;
        slowestMs = Math.max(slowestMs, r.elapsedMs);
        const kind = r.answer?.kind ?? "invalid";
        kinds[kind] = (kinds[kind] ?? 0) + 1;
        for (const label of r.reached) reached[label] = (reached[label] ?? 0) + 1;
      }
      if (results.some((r) => r.violations.length > 0)) {
        lastFailure = { batch, results };
        return false;
      }
      return true;
    },
  );
  try {
    const details = await fc.check(property, {
      seed,
      numRuns: Math.ceil(settings.count / BATCH),
      endOnFailure: !settings.shrink,
    });
    const report = {
      entry,
      seed: settings.seed,
      entrySeed: seed,
      cases,
      kinds,
      reached,
      slowestMs,
      elapsedMs: performance.now() - started,
    };
    if (!details.failed) return report;
    if (!lastFailure)
      return {
        ...report,
        failure: {
          message: `fuzz harness error (not a hook verdict): ${String(details.errorInstance).slice(0, 500)}`,
          file: "",
        },
      };
    return { ...report, failure: describeFailure(entry, settings, seed, details, lastFailure) };
  } finally {
    for (const slot of slots) slot.discard();
    fs.rmSync(parent, { recursive: true, force: true });
  }
}

function describeFailure(
  entry: Entry,
  settings: FuzzSettings,
  seed: number,
  details: fc.RunDetails<[FuzzCase[]]>,
  failure: { batch: FuzzCase[]; results: CaseResult[] },
): { message: string; file: string } {
  const dir = path.join(REPO_ROOT, "dist", "fuzz-failures");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${entry.id.replace("/", "-")}-seed${settings.seed}.json`);
  const failing = failure.batch
    .map((c, i) => ({ case: c, violations: failure.results[i]!.violations }))
    .filter((f) => f.violations.length > 0);
  fs.writeFileSync(
    file,
    JSON.stringify(
      { entry: entry.id, seed: settings.seed, entrySeed: seed, path: details.counterexamplePath, failing },
      null,
      1,
    ),
  );
  const lines = failing
    .slice(0, 3)
    .flatMap((f) => [`  case ${describeCase(f.case)}`, ...f.violations.map((v) => `    - ${v}`)]);
  const message = [
    `${entry.id}: ${failing.length} payload(s) broke an invariant in batch ${details.numRuns} (of ${BATCH} payloads each).`,
    `  reproduce: VELESDB_FUZZ_SEED=${settings.seed} VELESDB_FUZZ_RUNS=${settings.count} bun test test/fuzz.test.ts`,
    `         or: bun run fuzz -- --seed ${settings.seed} --count ${settings.count} --entry ${entry.id}   (add --shrink to minimise)`,
    `     replay: bun scripts/fuzz.ts --replay ${path.relative(REPO_ROOT, file)}`,
    ...lines,
    // Once fixed, the case stays in the suite as a row of REGRESSION_ROWS (docs/development/testing.md#deep-fuzzing).
    `  regression row for test/fuzz-regressions.test.ts:`,
    `    ${regressionRow(entry.id, `seed ${settings.seed}`, failing[0]!.case)}`,
  ].join("\n");
  return { message, file };
}

/** regressionRow(entry, found, case) → the source line that pins a failing case in REGRESSION_ROWS. */
export function regressionRow(entryId: string, found: string, c: FuzzCase): string {
  return `{ entry: ${JSON.stringify(entryId)}, found: ${JSON.stringify(found)}, case: ${JSON.stringify(c)} },`;
}

/** replayFile(file) → the saved failing cases, run again (for scripts/fuzz.ts --replay). */
export async function replayFailures(entry: Entry, cases: readonly FuzzCase[], boundMs: number): Promise<CaseResult[]> {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "vh-fuzz-replay-"));
  try {
    return await Promise.all(cases.map((c) => runCase(entry, c, boundMs, parent)));
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
}
