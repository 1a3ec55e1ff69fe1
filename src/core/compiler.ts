// The client for `velesdb-memory compile-stdin` (docs/contract.md §7): find the program, ask once per
// session whether it knows the subcommand, compile, and read its answer strictly. Every call
// runs under the watchdog, and anything this module does not recognise is a reason not to
// ship: compression is advisory, so a doubtful answer leaves the tool result untouched.
import * as fs from "node:fs";
import * as path from "node:path";
import { posixCksum } from "./cksum.ts";
import { isPlainObject } from "./payload.ts";
import { markerPath, readPrivateFile, writePrivateFile } from "./state.ts";
import { runWithWatchdog, type WatchdogOutcome } from "./watchdog.ts";

export const COMPILE_TIMEOUT_MS = 20_000;
export const PROBE_BUDGET = 4096;
/** The probe's corpus: one ordinary line, compiled at PROBE_BUDGET without --query. */
export const PROBE_CORPUS = "velesdb-hooks capability probe: one line of ordinary text.\n";
/** An answer larger than this is not a compilation we would ship anyway. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export type Risk = "low" | "medium" | "high";

export type CompilerLocation =
  | { readonly ok: true; readonly path: string }
  | { readonly ok: false; readonly problem: string };

/**
 * resolveCompiler(env) → the absolute path of `$VELESDB_MEMORY_BIN` (default `velesdb-memory`).
 * A bare name is looked up on PATH here, without a shell; only absolute PATH entries count,
 * because a relative one would resolve against the untrusted repository the agent works in.
 * A relative path with a separator is refused for the same reason.
 */
export function resolveCompiler(env: NodeJS.ProcessEnv): CompilerLocation {
  const configured = env.VELESDB_MEMORY_BIN;
  const name = configured === undefined || configured === "" ? "velesdb-memory" : configured;
  if (name.includes("\0")) return { ok: false, problem: "VELESDB_MEMORY_BIN contains a NUL byte" };
  const hasSeparator = name.includes("/") || (process.platform === "win32" && name.includes("\\"));
  if (hasSeparator) {
    if (!path.isAbsolute(name))
      return {
        ok: false,
        problem: `VELESDB_MEMORY_BIN ${JSON.stringify(name)} is neither absolute nor a bare command name`,
      };
    return isExecutableFile(name)
      ? { ok: true, path: name }
      : { ok: false, problem: `compiler ${name} is not an executable file` };
  }
  const extensions =
    process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").filter(Boolean)] : [""];
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "" || !path.isAbsolute(dir)) continue;
    for (const extension of extensions) {
      const candidate = path.join(dir, name + extension);
      if (isExecutableFile(candidate)) return { ok: true, path: candidate };
    }
  }
  return { ok: false, problem: `${name} was not found on PATH` };
}

/** isExecutableFile("/x") → true when a regular file there can be run by this user (links followed, as exec does). */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** probeKind("/usr/bin/velesdb-memory") → `compile-stdin-<cksum of the path>` (docs/contract.md §3.3). */
export const probeKind = (compilerPath: string): string => `compile-stdin-${posixCksum(compilerPath)}`;

export type ProbeVerdict = { readonly capable: true } | { readonly capable: false; readonly problem: string };

/**
 * probeCompiler(store, session, compiler, timeoutMs, env) → whether this compiler knows
 * compile-stdin, asked once per (session, compiler path) and remembered as a `yes`/`no`
 * marker. A marker that is linked, foreign, or holds anything else disables compression:
 * state we cannot trust is never evidence in either direction.
 */
export async function probeCompiler(
  store: { readonly dir: string },
  sessionId: string,
  compilerPath: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
): Promise<ProbeVerdict> {
  const marker = markerPath(store, probeKind(compilerPath), sessionId);
  const cached = readPrivateFile(marker, 64);
  if (cached.state === "present") {
    const verdict = cached.content.trim();
    if (verdict === "yes") return { capable: true };
    if (verdict === "no")
      return { capable: false, problem: `the compile-stdin probe of ${compilerPath} said no earlier in this session` };
    return { capable: false, problem: `probe marker ${marker} is malformed` };
  }
  if (cached.state !== "absent") return { capable: false, problem: `probe marker ${cached.path} ${cached.problem}` };

  const outcome = await runWithWatchdog(
    compilerPath,
    ["compile-stdin", "--budget", String(PROBE_BUDGET)],
    PROBE_CORPUS,
    {
      timeoutMs,
      maxStdoutBytes: 1024 * 1024,
      env,
    },
  );
  const problem = probeProblem(outcome);
  const written = writePrivateFile(marker, problem === null ? "yes\n" : "no\n");
  if (problem !== null)
    return { capable: false, problem: `${compilerPath} failed the compile-stdin probe (${problem})` };
  // A yes we cannot remember is still a yes for this call, unless the write hit a planted
  // link or a non-file: then the state is hostile and we stop here.
  if (!written.ok && written.cause !== "storage") return { capable: false, problem: `probe marker ${written.problem}` };
  return { capable: true };
}

/** probeProblem(outcome) → null when the answer has string content and a valid risk. */
export function probeProblem(outcome: WatchdogOutcome): string | null {
  const failed = runProblem(outcome, "probe");
  if (failed) return failed;
  const answer = parseAnswerObject(outcome.stdout);
  if (typeof answer === "string") return answer;
  if (typeof answer.content !== "string") return "its answer has no string content";
  const risk = readRisk(answer.risk);
  return risk.ok ? null : risk.problem;
}

/** What one compilation returned, field by field; compress.ts applies the gates in order. */
export interface CompilerAnswer {
  readonly content: unknown;
  readonly risk: unknown;
  readonly tokens_in: unknown;
  readonly tokens_out: unknown;
  readonly tokens_saved: unknown;
}

export type CompileOutcome =
  | { readonly ok: true; readonly answer: CompilerAnswer }
  | { readonly ok: false; readonly problem: string };

/** compileText(bin, text, 2000, "Bash output", env, 20000) → the compiler's JSON answer, or why there is none. */
export async function compileText(
  compilerPath: string,
  text: string | Uint8Array,
  budget: number,
  query: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number = COMPILE_TIMEOUT_MS,
): Promise<CompileOutcome> {
  // Argument order is part of the contract: compatible fakes key on it (docs/contract.md §7).
  const outcome = await runWithWatchdog(
    compilerPath,
    ["compile-stdin", "--budget", String(budget), "--query", query],
    text,
    {
      timeoutMs,
      maxStdoutBytes: MAX_ANSWER_BYTES,
      env,
    },
  );
  const failed = runProblem(outcome, "compilation");
  if (failed) return { ok: false, problem: failed };
  const answer = parseAnswerObject(outcome.stdout);
  if (typeof answer === "string") return { ok: false, problem: `compilation ${answer}` };
  return { ok: true, answer };
}

function runProblem(outcome: WatchdogOutcome, what: string): string | null {
  if (outcome.spawnError !== null) return `${what} could not start: ${outcome.spawnError}`;
  if (outcome.timedOut) return `${what} timed out`;
  if (outcome.stdoutOverflow) return `${what} printed more than ${MAX_ANSWER_BYTES} bytes`;
  if (outcome.exitCode !== 0) {
    const how =
      outcome.exitCode === null ? `was killed by ${outcome.signal ?? "a signal"}` : `exited ${outcome.exitCode}`;
    const said = outcome.stderr
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim();
    return said ? `${what} ${how}: ${said.slice(0, 200)}` : `${what} ${how}`;
  }
  return null;
}

/** parseAnswerObject('{"content":"x",…}') → the object, or a phrase saying why it is not one. */
function parseAnswerObject(stdout: string): CompilerAnswer | string {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    return "answer is not JSON";
  }
  if (!isPlainObject(value)) return "answer is not a JSON object";
  return value as unknown as CompilerAnswer;
}

/**
 * readRisk(value) → the risk when it is exactly "low", "medium" or "high". Fail closed: a
 * missing field, another word or another type is never read as "probably fine".
 */
export function readRisk(value: unknown): { ok: true; risk: Risk } | { ok: false; problem: string } {
  if (value === undefined) return { ok: false, problem: "the answer has no risk" };
  if (typeof value !== "string")
    return { ok: false, problem: `risk is a ${value === null ? "null" : typeof value}, not a string` };
  if (value === "low" || value === "medium" || value === "high") return { ok: true, risk: value };
  return { ok: false, problem: `risk ${JSON.stringify(value.slice(0, 40))} is not low, medium or high` };
}

export interface TokenCounts {
  readonly tokensIn: number;
  readonly tokensOut: number;
  readonly tokensSaved: number;
}

/**
 * tokenCountsProblem(answer) → why the answer's counts are not compile-stdin's (non-negative
 * integers, tokens_saved = tokens_in − tokens_out, saturating at 0: compiler.rs), or "". Read
 * strictly though the hook prices the saving itself: an answer that breaks its own arithmetic is
 * not one we recognise. The view is sized to fit, so out may equal in.
 */
export function tokenCountsProblem(answer: CompilerAnswer): string {
  const { tokens_in: tokensIn, tokens_out: tokensOut, tokens_saved: tokensSaved } = answer;
  const count = (value: unknown): value is number =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
  if (!count(tokensIn) || !count(tokensOut) || !count(tokensSaved)) return "token counts are not non-negative integers";
  if (tokensSaved !== Math.max(0, tokensIn - tokensOut))
    return `tokens_saved ${tokensSaved} is not tokens_in ${tokensIn} minus tokens_out ${tokensOut}`;
  return "";
}

/** readTokens(answer) → the counts when they are non-negative integers with saved = in − out and out < in. */
export function readTokens(answer: CompilerAnswer): { ok: true; tokens: TokenCounts } | { ok: false; problem: string } {
  const { tokens_in: tokensIn, tokens_out: tokensOut, tokens_saved: tokensSaved } = answer;
  const count = (value: unknown): value is number =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
  if (!count(tokensIn) || !count(tokensOut) || !count(tokensSaved))
    return { ok: false, problem: "token counts are not non-negative integers" };
  if (tokensOut >= tokensIn)
    return { ok: false, problem: `the compilation is not smaller (${tokensOut} tokens out of ${tokensIn})` };
  if (tokensSaved !== tokensIn - tokensOut) {
    return {
      ok: false,
      problem: `tokens_saved ${tokensSaved} is not tokens_in ${tokensIn} minus tokens_out ${tokensOut}`,
    };
  }
  return { ok: true, tokens: { tokensIn, tokensOut, tokensSaved } };
}
