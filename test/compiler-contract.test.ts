// The compile-stdin contract: every test double of `velesdb-memory compile-stdin` answers in the
// wire of the real one, and the real one passes the gates our product applies (docs/contract.md §7, §8).
//
// The wire (WIRE below) was measured on velesdb-memory 0.12.0 built from
// github:cyberlife-coder/VelesDB at 92b0086a7e6c40319f28e77cbb5959d7be9cb1e5 (the subcommand is
// crates/velesdb-memory/src/main.rs: parse_compile_stdin_args, compile_stdin_json,
// run_compile_stdin). The doubles are always checked against it; with
// VELESDB_MEMORY_BIN_REAL=<path of that binary> the real one is checked against it too, and
// through the compiled PostToolUse hook. Without it those cases skip (the binary is not a
// dependency of this repository).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compileText, PROBE_BUDGET, PROBE_CORPUS, probeProblem, readRisk, readTokens } from "../src/core/compiler.ts";
import { runWithWatchdog } from "../src/core/watchdog.ts";
import { bashPayload, fake, hookCommand, PLAIN_PATH, realisticCompiler, realisticLog, type HookCommand } from "./support/compress-fixtures.ts";
import { makeSandbox, parseOneJsonAnswer, REPO_ROOT, type Sandbox } from "./support/hook-runner.ts";

const REAL = process.env.VELESDB_MEMORY_BIN_REAL;
const FAKE_MCP = path.join(REPO_ROOT, "test", "e2e", "fake-velesdb-memory.mjs");

/** What one call looked like on the wire, reduced to what a caller may rely on. */
type Shape =
  | { kind: "answer"; exitCode: 0; lines: number; trailingNewline: boolean; keys: string[]; types: string[]; riskKnown: boolean; savedIsDifference: boolean; stderr: string }
  | { kind: "error"; exitCode: number; stdout: string; stderrLines: number; stderr: RegExp };

const ANSWER_KEYS = ["content", "tokens_in", "tokens_out", "tokens_saved", "risk"];
const answerShape: Shape = {
  kind: "answer",
  exitCode: 0,
  lines: 1,
  trailingNewline: true,
  keys: ANSWER_KEYS,
  types: ["string", "integer", "integer", "integer", "string"],
  riskKnown: true,
  savedIsDifference: true,
  stderr: "",
};
const errorShape = (stderr: RegExp): Shape => ({ kind: "error", exitCode: 1, stdout: "", stderrLines: 1, stderr });

/** A Bash-like output well over docs/contract.md §8's 12 000-byte floor. */
const BASH_OUTPUT = realisticLog(40_000);
const NINE_MIB = "x".repeat(9 * 1024 * 1024);

interface Case {
  readonly name: string;
  readonly args: readonly string[];
  readonly stdin: string | Uint8Array;
  readonly wire: Shape;
}

// Measured on the real binary (see the header); each line is what it did.
const WIRE: readonly Case[] = [
  { name: "the probe: a one-line corpus at --budget 4096", args: ["--budget", String(PROBE_BUDGET)], stdin: PROBE_CORPUS, wire: answerShape },
  { name: "a 40 KB Bash output at --budget 2000 --query \"Bash output\"", args: ["--budget", "2000", "--query", "Bash output"], stdin: BASH_OUTPUT, wire: answerShape },
  { name: "empty stdin", args: ["--budget", "2000", "--query", "Bash output"], stdin: "", wire: errorShape(/^Error: "compile-stdin received empty input on stdin"\n$/) },
  { name: "whitespace only", args: ["--budget", "2000", "--query", "Bash output"], stdin: " \n\t \n", wire: errorShape(/^Error: "compile-stdin received empty input on stdin"\n$/) },
  {
    name: "bytes that are not UTF-8",
    args: ["--budget", "2000", "--query", "Bash output"],
    stdin: new Uint8Array([0x62, 0x69, 0x6e, 0xff, 0xfe, 0x00, 0x0a]),
    wire: errorShape(/^Error: Error \{ kind: InvalidData, message: "stream did not contain valid UTF-8" \}\n$/),
  },
  {
    name: "more than 8 MiB",
    args: ["--budget", "2000", "--query", "Bash output"],
    stdin: NINE_MIB,
    wire: errorShape(/^Error: ContextOverLimit\("transcript of 9437184 bytes exceeds the cap of 8388608 bytes"\)\n$/),
  },
  { name: "an unknown flag", args: ["--nope"], stdin: "text\n", wire: errorShape(/^Error: "unknown compile-stdin flag \\"--nope\\""\n$/) },
  { name: "--budget 0", args: ["--budget", "0"], stdin: "text\n", wire: errorShape(/^Error: "--budget must be greater than 0"\n$/) },
  { name: "--budget that is not a number", args: ["--budget", "lots"], stdin: "text\n", wire: errorShape(/^Error: "--budget expects a positive integer, got \\"lots\\""\n$/) },
  { name: "--budget without a value", args: ["--budget"], stdin: "text\n", wire: errorShape(/^Error: "--budget requires a value"\n$/) },
  {
    name: "--budget 1 on the Bash output (nothing fits)",
    args: ["--budget", "1", "--query", "Bash output"],
    stdin: BASH_OUTPUT,
    wire: errorShape(/^Error: "a budget of 1 tokens fits none of the \d+ input tokens — every fragment was externalized and the compiled context is empty; raise --budget"\n$/),
  },
];

/** The doubles, and the cases each one models (the sh fakes compile nothing, so no "nothing fits"). */
interface Double {
  readonly name: string;
  readonly command: () => string[];
  readonly skips: readonly string[];
}
const NOTHING_FITS = "--budget 1 on the Bash output (nothing fits)";
const DOUBLES: readonly Double[] = [
  { name: "test/e2e/fake-velesdb-memory.mjs", command: () => ["node", FAKE_MCP], skips: [NOTHING_FITS] },
  { name: "fixtures/compilers/realistic.ts (compiled)", command: () => [realisticCompiler()], skips: [] },
  { name: "fixtures/compilers/medium.sh", command: () => [fake("medium")], skips: [NOTHING_FITS] },
  { name: "fixtures/compilers/low.sh", command: () => [fake("low")], skips: [NOTHING_FITS] },
];

let sb: Sandbox;
beforeAll(() => {
  sb = makeSandbox("compiler-contract");
});
afterAll(() => sb.cleanup());

/** A private HOME and TMPDIR: the real binary must never see this machine's own data. */
const callEnv = (): Record<string, string> => ({ PATH: PLAIN_PATH, HOME: sb.home, TMPDIR: sb.tmp, LANG: "C.UTF-8" });

function call(command: readonly string[], c: Case) {
  const run = Bun.spawnSync([...command, "compile-stdin", ...c.args], { stdin: typeof c.stdin === "string" ? Buffer.from(c.stdin) : c.stdin, env: callEnv(), stdout: "pipe", stderr: "pipe", timeout: 60_000 });
  return { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

const typeName = (value: unknown): string => (Number.isSafeInteger(value) ? "integer" : value === null ? "null" : typeof value);

/** shapeOf(run) → the run reduced to a Shape, comparable with toEqual (an error's stderr is matched separately). */
function shapeOf(run: { exitCode: number; stdout: string; stderr: string }): Shape {
  if (run.exitCode !== 0) return { kind: "error", exitCode: run.exitCode, stdout: run.stdout, stderrLines: run.stderr.split("\n").filter(Boolean).length, stderr: /./ };
  const lines = run.stdout.split("\n").filter(Boolean);
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(run.stdout) as Record<string, unknown>;
  } catch {
    // lines/keys below then say what is wrong
  }
  const keys = Object.keys(parsed);
  return {
    kind: "answer",
    exitCode: 0,
    lines: lines.length,
    trailingNewline: run.stdout.endsWith("\n"),
    keys,
    types: keys.map((k) => typeName(parsed[k])),
    riskKnown: readRisk(parsed.risk).ok,
    savedIsDifference: parsed.tokens_saved === (parsed.tokens_in as number) - (parsed.tokens_out as number),
    stderr: run.stderr,
  };
}

function expectWire(run: { exitCode: number; stdout: string; stderr: string }, c: Case): void {
  const shape = shapeOf(run);
  if (c.wire.kind === "error") {
    expect({ ...shape, stderr: null }).toEqual({ ...c.wire, stderr: null });
    expect(run.stderr).toMatch(c.wire.stderr);
  } else {
    expect(shape).toEqual(c.wire);
  }
}

describe.each(DOUBLES)("double %#: answers in the real wire", (double) => {
  test.each(WIRE.filter((c) => !double.skips.includes(c.name)).map((c) => [c.name, c] as const))(`${double.name}: %s`, (_name, c) => {
    expectWire(call(double.command(), c), c);
  });
});

describe("negative control: the contract check can fail", () => {
  test("the sh fake that omits risk does not pass as the answer wire", () => {
    expect(shapeOf(call([fake("risk-missing")], WIRE[1]!))).not.toEqual(answerShape);
  });
  test("an answer without its trailing newline (the old inline doctor fake) does not pass", () => {
    const shape = shapeOf({ exitCode: 0, stdout: '{"content":"x","tokens_in":9,"tokens_out":3,"tokens_saved":6,"risk":"low"}', stderr: "" });
    expect(shape).not.toEqual(answerShape);
  });
});

describe.skipIf(!REAL)("the real velesdb-memory (VELESDB_MEMORY_BIN_REAL)", () => {
  test.each(WIRE.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    expectWire(call([REAL!], c), c);
  });

  test("the probe, read by our own code, says yes", async () => {
    const outcome = await runWithWatchdog(REAL!, ["compile-stdin", "--budget", String(PROBE_BUDGET)], PROBE_CORPUS, { timeoutMs: 30_000, maxStdoutBytes: 1024 * 1024, env: callEnv() });
    expect(probeProblem(outcome)).toBeNull();
  });

  test("a Bash-sized compilation passes the risk and token gates of docs/contract.md §8", async () => {
    const compiled = await compileText(REAL!, BASH_OUTPUT, 2000, "Bash output", callEnv(), 30_000);
    if (!compiled.ok) throw new Error(compiled.problem);
    expect(readRisk(compiled.answer.risk)).toMatchObject({ ok: true });
    expect(readRisk(compiled.answer.risk)).not.toEqual({ ok: true, risk: "high" });
    expect(readTokens(compiled.answer)).toMatchObject({ ok: true });
  });

  describe("through the compiled PostToolUse hook", () => {
    let hook: HookCommand;
    beforeAll(() => {
      hook = hookCommand();
    });

    function runHook(stdout: string, compiler: string) {
      const workspace = fs.mkdtempSync(path.join(sb.root, "ws-"));
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "vh-contract-home-"));
      try {
        const run = Bun.spawnSync([hook.binary, ...hook.args], {
          stdin: Buffer.from(JSON.stringify(bashPayload(stdout, { cwd: workspace, sessionId: `contract-${path.basename(workspace)}` }))),
          env: { PATH: PLAIN_PATH, HOME: home, TMPDIR: home, LANG: "C.UTF-8", VELESDB_MEMORY_BIN: compiler },
          cwd: workspace,
          stdout: "pipe",
          stderr: "pipe",
          timeout: 60_000,
        });
        return { exitCode: run.exitCode, answer: parseOneJsonAnswer(run.stdout.toString()), stderr: run.stderr.toString() };
      } finally {
        fs.rmSync(home, { recursive: true, force: true });
      }
    }

    test("a >12 KB Bash result reaches the model compiled by the real compiler, with the footer", () => {
      expect(Buffer.byteLength(BASH_OUTPUT)).toBeGreaterThan(12_000);
      const result = runHook(BASH_OUTPUT, REAL!);
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
      const output = (result.answer.hookSpecificOutput as { updatedToolOutput?: { stdout: string } } | undefined)?.updatedToolOutput;
      expect(output?.stdout).toMatch(/fidelity risk (low|medium)\./);
      expect(Buffer.byteLength(output!.stdout)).toBeLessThan(Buffer.byteLength(BASH_OUTPUT));
    });

    test("negative control: the same result with the compiler absent is left untouched", () => {
      const result = runHook(BASH_OUTPUT, path.join(sb.root, "no-such-velesdb-memory"));
      expect(result.answer).toEqual({});
    });
  });
});
