// The compile-stdin contract: every test double of `velesdb-memory compile-stdin` answers in the
// wire of the real one, and the real one passes the gates our product applies (docs/contract.md §7, §8).
//
// The wire is what crates.io velesdb-memory 0.17.0 (packaged from VelesDB a9eeabad; the
// subcommand is src/daemon_commands.rs run_compile_stdin, flags src/cli_flags.rs) answered for
// the cases of test/support/compile-stdin-cases.ts, captured by
// scripts/capture-velesdb-memory-wire.ts into test/e2e/velesdb-memory-wire.json (`compileStdin`:
// exit status, the answer's keys, a refusal's whole stderr). The doubles are always checked
// against it; the real binary (VELESDB_MEMORY_BIN_REAL, built by .ci/run) is checked against it
// too, and through the compiled PostToolUse hook. Without it those cases skip, and fail under
// CI=true (test/support/real-velesdb-memory.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compileText, PROBE_BUDGET, PROBE_CORPUS, probeProblem, readRisk, readTokens } from "../src/core/compiler.ts";
import { runWithWatchdog } from "../src/core/watchdog.ts";
import {
  bashPayload,
  fake,
  hookCommand,
  PLAIN_PATH,
  realisticCompiler,
  type HookCommand,
} from "./support/compress-fixtures.ts";
import {
  BASH_OUTPUT,
  COMPILE_CASES,
  NOTHING_FITS,
  tokensMasked,
  type CompileCase,
  type CompileOutcome,
} from "./support/compile-stdin-cases.ts";
import { makeSandbox, parseOneJsonAnswer, REPO_ROOT, type Sandbox } from "./support/hook-runner.ts";
import { describeWithReal, realBinary } from "./support/real-velesdb-memory.ts";

const CAPTURED = (
  JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "test", "e2e", "velesdb-memory-wire.json"), "utf8")) as {
    compileStdin: Record<string, CompileOutcome>;
  }
).compileStdin;
const FAKE_MCP = path.join(REPO_ROOT, "test", "e2e", "fake-velesdb-memory.mjs");

/** What one call looked like on the wire, reduced to what a caller may rely on. */
type Shape =
  | {
      kind: "answer";
      exitCode: 0;
      lines: number;
      trailingNewline: boolean;
      keys: string[];
      types: string[];
      riskKnown: boolean;
      savedIsDifference: boolean;
      stderr: string;
    }
  | { kind: "error"; exitCode: number; stdout: string; stderrLines: number; stderr: string };

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
const errorShape = (stderr: string): Shape => ({ kind: "error", exitCode: 1, stdout: "", stderrLines: 1, stderr });

interface Case extends CompileCase {
  readonly wire: Shape;
}

/** The cases, each with what the real binary did (captured; a case the capture lacks is a failure here). */
const WIRE: readonly Case[] = COMPILE_CASES.map((c) => {
  const outcome = CAPTURED[c.name];
  if (!outcome)
    throw new Error(
      `velesdb-memory-wire.json has no compile-stdin capture for ${JSON.stringify(c.name)}: run scripts/capture-velesdb-memory-wire.ts`,
    );
  if (outcome.exitCode === 0) {
    if (JSON.stringify(outcome.keys) !== JSON.stringify(ANSWER_KEYS))
      throw new Error(`the captured answer to ${JSON.stringify(c.name)} has keys ${JSON.stringify(outcome.keys)}`);
    return { ...c, wire: answerShape };
  }
  return { ...c, wire: errorShape(tokensMasked(outcome.stderr ?? "")) };
});

/** The doubles, and the cases each one models (the sh fakes compile nothing, so no "nothing fits"). */
interface Double {
  readonly name: string;
  readonly command: () => string[];
  readonly skips: readonly string[];
}
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
  const run = Bun.spawnSync([...command, "compile-stdin", ...c.args], {
    stdin: typeof c.stdin === "string" ? Buffer.from(c.stdin) : c.stdin,
    env: callEnv(),
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  return { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

const typeName = (value: unknown): string =>
  Number.isSafeInteger(value) ? "integer" : value === null ? "null" : typeof value;

/** shapeOf(run) → the run reduced to a Shape, comparable with toEqual (an error's stderr is matched separately). */
function shapeOf(run: { exitCode: number; stdout: string; stderr: string }): Shape {
  if (run.exitCode !== 0)
    return {
      kind: "error",
      exitCode: run.exitCode,
      stdout: run.stdout,
      stderrLines: run.stderr.split("\n").filter(Boolean).length,
      stderr: tokensMasked(run.stderr),
    };
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
  expect(shapeOf(run)).toEqual(c.wire);
}

describe.each(DOUBLES)("double %#: answers in the real wire", (double) => {
  test.each(WIRE.filter((c) => !double.skips.includes(c.name)).map((c) => [c.name, c] as const))(
    `${double.name}: %s`,
    (_name, c) => {
      expectWire(call(double.command(), c), c);
    },
  );
});

describe("negative control: the contract check can fail", () => {
  test("the sh fake that omits risk does not pass as the answer wire", () => {
    expect(shapeOf(call([fake("risk-missing")], WIRE[1]!))).not.toEqual(answerShape);
  });
  test("a refusal in 0.12.0's Debug-quoted form does not pass as 0.17.0's", () => {
    const empty = WIRE.find((c) => c.name === "empty stdin")!;
    expect(
      shapeOf({ exitCode: 1, stdout: "", stderr: 'Error: "compile-stdin received empty input on stdin"\n' }),
    ).not.toEqual(empty.wire);
  });
  test("an answer without its trailing newline (the old inline doctor fake) does not pass", () => {
    const shape = shapeOf({
      exitCode: 0,
      stdout: '{"content":"x","tokens_in":9,"tokens_out":3,"tokens_saved":6,"risk":"low"}',
      stderr: "",
    });
    expect(shape).not.toEqual(answerShape);
  });
});

describeWithReal("the real velesdb-memory (VELESDB_MEMORY_BIN_REAL)", () => {
  test.each(WIRE.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    expectWire(call([realBinary()], c), c);
  });

  test("the probe, read by our own code, says yes", async () => {
    const outcome = await runWithWatchdog(
      realBinary(),
      ["compile-stdin", "--budget", String(PROBE_BUDGET)],
      PROBE_CORPUS,
      { timeoutMs: 30_000, maxStdoutBytes: 1024 * 1024, env: callEnv() },
    );
    expect(probeProblem(outcome)).toBeNull();
  });

  test("a Bash-sized compilation passes the risk and token gates of docs/contract.md §8", async () => {
    const compiled = await compileText(realBinary(), BASH_OUTPUT, 2000, "Bash output", callEnv(), 30_000);
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
          stdin: Buffer.from(
            JSON.stringify(bashPayload(stdout, { cwd: workspace, sessionId: `contract-${path.basename(workspace)}` })),
          ),
          env: { PATH: PLAIN_PATH, HOME: home, TMPDIR: home, LANG: "C.UTF-8", VELESDB_MEMORY_BIN: compiler },
          cwd: workspace,
          stdout: "pipe",
          stderr: "pipe",
          timeout: 60_000,
        });
        return {
          exitCode: run.exitCode,
          answer: parseOneJsonAnswer(run.stdout.toString()),
          stderr: run.stderr.toString(),
        };
      } finally {
        fs.rmSync(home, { recursive: true, force: true });
      }
    }

    test("a >12 KB Bash result reaches the model compiled by the real compiler, with the footer", () => {
      expect(Buffer.byteLength(BASH_OUTPUT)).toBeGreaterThan(12_000);
      const result = runHook(BASH_OUTPUT, realBinary());
      expect(result.stderr).toBe("");
      expect(result.exitCode).toBe(0);
      const output = (result.answer.hookSpecificOutput as { updatedToolOutput?: { stdout: string } } | undefined)
        ?.updatedToolOutput;
      expect(output?.stdout).toMatch(
        /made by velesdb-memory compile-stdin from \d+ bytes: .*compile-stdin's fidelity risk: (low|medium|high)\)\./,
      );
      expect(Buffer.byteLength(output!.stdout)).toBeLessThan(Buffer.byteLength(BASH_OUTPUT));
    });

    test("negative control: the same result with the compiler absent is left untouched", () => {
      const result = runHook(BASH_OUTPUT, path.join(sb.root, "no-such-velesdb-memory"));
      expect(result.answer).toEqual({});
    });
  });
});
