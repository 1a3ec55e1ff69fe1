// PostToolUse compression (docs/contract.md §7, §8). The rule is tested as a function against the fake
// compilers in fixtures/compilers (real processes, no mocks), then as the compiled binary where
// the process boundary matters: hangs, grandchildren, 5 MB payloads, bunfig/.env autoload.
// Every refusal runs beside its positive control: the same setup with one thing changed ships.
import { afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { probeKind } from "../src/core/compiler.ts";
import { archivePieces, utf8Slices, writeArchive } from "../src/core/compress-archive.ts";
import { MAX_NESTING, nestedDeeperThan, parseKnob } from "../src/core/compress-gates.ts";
import { Utf8Literal } from "../src/core/json-bytes.ts";
import type { Decision } from "../src/core/decision.ts";
import { createHookInput } from "../src/core/hook-input.ts";
import { markerPath } from "../src/core/state.ts";
import { claude } from "../src/hosts/claude.ts";
import { realOutput } from "./support/real-outputs.ts";
import {
  bashPayload,
  fake,
  hookCommand,
  killQuietly,
  PLAIN_PATH,
  pidsFrom,
  waitUntilGone,
  type HookCommand,
} from "./support/compress-fixtures.ts";
import { makeSandbox, parseOneJsonAnswer, type Sandbox } from "./support/hook-runner.ts";
import { missing } from "./support/requires.ts";

/** A real pytest run (test/support/real-outputs.ts): 600 PASSED lines, 2 failures, its summary. */
const PYTEST = realOutput("pytest");
const LOG = PYTEST.stdout;
/** 3000 distinct error lines: no budget of 4000 tokens holds them all. */
const UNIQUE_ERRORS = Array.from({ length: 3000 }, (_, i) => `error: step ${i} failed with code ${i * 7}\n`).join("");
const SESSION = "0d6f7a52-compress-test";
/** The real velesdb-memory 0.17.0 (VELESDB_MEMORY_BIN_REAL); without it these cases skip here and fail under CI=true. */
const REAL = process.env.VELESDB_MEMORY_BIN_REAL;
const realTest = REAL || process.env.CI === "true" ? test : test.skip;
const realCompiler = (): string => {
  if (!REAL)
    throw new Error(
      "VELESDB_MEMORY_BIN_REAL must name the real velesdb-memory 0.17.0 (CI=true: this case may not skip)",
    );
  return REAL;
};

let sb: Sandbox;
let pidFiles: string[] = [];
beforeEach(() => {
  sb = makeSandbox("compress");
});
afterEach(() => {
  for (const file of pidFiles) killQuietly(pidsFrom(file));
  pidFiles = [];
  sb.cleanup();
});

/** The hook's environment: private HOME/TMPDIR, a PATH without bun, the given compiler. */
function hookEnv(compiler: string | null, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: PLAIN_PATH, HOME: sb.home, TMPDIR: sb.tmp, LANG: "C.UTF-8", ...extra };
  if (compiler !== null) env.VELESDB_MEMORY_BIN = compiler;
  return env;
}

function payloadOf(
  stdout = LOG,
  options: { response?: Record<string, unknown>; toolName?: string; sessionId?: string } = {},
) {
  return bashPayload(stdout, { cwd: sb.workspace, sessionId: SESSION, ...options });
}

function runRule(payload: Record<string, unknown>, env: Record<string, string>): Promise<Decision> {
  return Promise.resolve(claude.events["post-tool-use"]!.run(createHookInput(payload, "", claude.profile, env)));
}

function shipped(decision: Decision): Record<string, unknown> & { stdout: string } {
  if (decision.kind !== "replaceOutput") throw new Error(`expected a replacement, got ${JSON.stringify(decision)}`);
  return decision.toolResponse as Record<string, unknown> & { stdout: string };
}

function refused(decision: Decision, note?: RegExp): void {
  expect(decision.kind).toBe("pass");
  if (note) expect(decision.note ?? "").toMatch(note);
  else expect(decision.note).toBeUndefined();
}

/** The archive path the footer quotes (a JSON string after "saved at "). */
function archiveOf(stdout: string): string {
  const match = /saved at ("(?:[^"\\]|\\.)*")/.exec(stdout);
  if (!match) throw new Error("no archive path in the footer");
  return JSON.parse(match[1]!) as string;
}

const archiveDir = () => path.join(sb.stateDir, "tool-output");
const archives = () => (fs.existsSync(archiveDir()) ? fs.readdirSync(archiveDir()) : []);

/** recordedCalls(dir) → each call of records.sh: its argv and the bytes it read. */
function recordedCalls(dir: string): { args: string[]; stdin: Buffer }[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".args"))
    .map((f) => ({
      args: fs.readFileSync(path.join(dir, f), "utf8").split("\n").slice(0, -1),
      stdin: fs.readFileSync(path.join(dir, f.replace(/\.args$/, ".stdin"))),
    }));
}

describe("what ships", () => {
  test("a medium compilation replaces stdout and keeps every other field", async () => {
    const payload = payloadOf(LOG, { response: { stderr: "Shell cwd was reset", futureField: { kept: [1, 2] } } });
    const response = shipped(await runRule(payload, hookEnv(fake("medium"))));
    expect(response.stdout).toStartWith("MEDIUM-COMPILED");
    expect(response.stdout).toContain("fidelity risk: medium");
    // Both streams are in the view (the model read both): stderr is emptied, not lost.
    expect(response.stdout).toContain("\n[stderr]\nShell cwd was reset\n");
    expect(response).toMatchObject({
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
      futureField: { kept: [1, 2] },
    });
    expect(Object.keys(response).sort()).toEqual(Object.keys(payload.tool_response as object).sort());
  });

  test("a low compilation ships and the footer says so", async () => {
    const response = shipped(await runRule(payloadOf(), hookEnv(fake("low"))));
    expect(response.stdout).toStartWith("LOW-COMPILED");
    expect(response.stdout).toContain("fidelity risk: low");
    expect(response.stdout).not.toContain("fidelity risk: medium");
  });

  test("the footer states the counts, the bytes compiled, the signal lines and the archive, after the content", async () => {
    const response = shipped(await runRule(payloadOf(), hookEnv(fake("medium"))));
    const bytes = Buffer.byteLength(LOG);
    const [content, footer] = response.stdout.split("\n\n[velesdb-hooks] ") as [string, string];
    expect(content).toStartWith("MEDIUM-COMPILED");
    expect(footer).toMatch(
      new RegExp(
        `from ${bytes} bytes: (\\d+) tokens in, (\\d+) tokens out, (\\d+) tokens saved; its (\\d+) lines of errors, failures and summary are shown verbatim`,
      ),
    );
    const [, tokensIn, tokensOut, saved] = /(\d+) tokens in, (\d+) tokens out, (\d+) tokens saved/
      .exec(footer)!
      .map(Number) as number[];
    expect(tokensIn! - tokensOut!).toBe(saved!);
    expect(tokensOut!).toBeLessThan(tokensIn! / 4);
    expect(footer).toContain("complete original output is saved at");
    expect(footer).toContain("can be read");
    expect(archiveOf(response.stdout)).toStartWith(archiveDir());
  });

  test("risk high with every signal line in the view ships (the fidelity rule), and the footer says high", async () => {
    const response = shipped(await runRule(payloadOf(), hookEnv(fake("high-then-medium"))));
    expect(response.stdout).toStartWith("TIGHT-ATTEMPT at budget 2000");
    expect(response.stdout).toContain("fidelity risk: high");
    for (const line of PYTEST.mustKeep) expect(response.stdout.split("\n")).toContain(line);
  });

  test("the compiler receives the shaped view of a real pytest run: every failure line as text, the passes folded", async () => {
    const record = path.join(sb.root, "record");
    fs.mkdirSync(record);
    shipped(await runRule(payloadOf(LOG), hookEnv(fake("records"), { VELESDB_FAKE_RECORD_DIR: record })));
    const calls = recordedCalls(record);
    const probe = calls.find((c) => !c.args.includes("--query"));
    const compile = calls.find((c) => c.args.includes("--query"));
    expect(probe?.args).toEqual(["compile-stdin", "--budget", "4096"]);
    expect(compile?.args).toEqual(["compile-stdin", "--budget", "2000", "--query", "Bash output of cargo build"]);
    const received = compile!.stdin.toString("utf8");
    expect(received.length).toBeLessThan(LOG.length / 4);
    for (const line of PYTEST.mustKeep) expect(received.split("\n")).toContain(line);
    expect(received).toContain("more lines like the one above");
    expect(received.startsWith('"')).toBe(false);
  });

  test("the probe runs once per session and compiler: the second call reuses the marker", async () => {
    const record = path.join(sb.root, "record");
    fs.mkdirSync(record);
    const env = hookEnv(fake("records"), { VELESDB_FAKE_RECORD_DIR: record });
    shipped(await runRule(payloadOf(), env));
    shipped(await runRule(payloadOf(), env));
    const probes = recordedCalls(record).filter((c) => !c.args.includes("--query"));
    expect(probes.length).toBe(1);
    const marker = markerPath({ dir: sb.stateDir }, probeKind(fake("records")), SESSION);
    expect(fs.readFileSync(marker, "utf8")).toBe("yes\n");
    // A new session asks again.
    shipped(await runRule(payloadOf(LOG, { sessionId: "another-session" }), env));
    expect(recordedCalls(record).filter((c) => !c.args.includes("--query")).length).toBe(2);
  });

  test("a stdout given as a Utf8Literal (a large payload's) is compiled, archived and answered exactly as its string", async () => {
    const text = `${'naïve 😀 "quoted" \\ tab\t\u001b[31m ESC\n'.repeat(4000)}${LOG}`;
    const runs: Array<{ stdin: Buffer; archive: string; stdout: string }> = [];
    for (const stdout of [text, new Utf8Literal(Buffer.from(text, "utf8"))]) {
      const record = fs.mkdtempSync(path.join(sb.root, "record-"));
      const payload = payloadOf("", { response: { stdout, stderr: "warn" } });
      const response = shipped(await runRule(payload, hookEnv(fake("records"), { VELESDB_FAKE_RECORD_DIR: record })));
      const compile = recordedCalls(record).find((c) => c.args.includes("--query"));
      const archive = archiveOf(response.stdout);
      runs.push({
        stdin: compile!.stdin,
        archive: fs.readFileSync(archive, "utf8"), // The archive's random name is priced in the footer's count (its digits cost more than its letters).
        stdout: response.stdout
          .replace(JSON.stringify(archive), "ARCHIVE")
          .replace(/\d+ tokens out, \d+ tokens saved/, "N tokens out, N tokens saved"),
      });
    }
    const [fromString, fromBytes] = runs as [(typeof runs)[0], (typeof runs)[0]];
    expect(fromBytes.stdin.equals(fromString.stdin)).toBe(true);
    expect(fromString.archive).toBe(JSON.stringify(payloadOf(text, { response: { stderr: "warn" } }).tool_response));
    expect(fromBytes.archive).toBe(fromString.archive);
    expect(fromBytes.stdout).toBe(fromString.stdout);
  });

  realTest(
    "end to end with the real compile-stdin: every failure and the summary of a real pytest run survive",
    async () => {
      const response = shipped(await runRule(payloadOf(), hookEnv(realCompiler())));
      for (const line of PYTEST.mustKeep) expect(response.stdout.split("\n")).toContain(line);
      expect(Buffer.byteLength(response.stdout)).toBeLessThan(Buffer.byteLength(LOG) / 4);
    },
  );
});

describe("the archive", () => {
  test("holds the complete original object, 0600, inside a 0700 tool-output directory", async () => {
    const payload = payloadOf(LOG, { response: { stderr: "notice", extra: "kept", nested: { a: 1 } } });
    const response = shipped(await runRule(payload, hookEnv(fake("medium"))));
    const archive = archiveOf(response.stdout);
    expect(path.dirname(archive)).toBe(archiveDir());
    expect(path.basename(archive)).toMatch(/^velesdb-output\.[0-9a-f]{24}$/);
    const original = JSON.parse(fs.readFileSync(archive, "utf8"));
    expect(original).toEqual(payload.tool_response);
    expect(original.stdout).toEndWith("\n");
    expect(fs.lstatSync(archive).mode & 0o777).toBe(0o600);
    expect(fs.lstatSync(archiveDir()).mode & 0o777).toBe(0o700);
  });

  test("a planted symlink at a name we draw is never followed; the next name is used", () => {
    fs.mkdirSync(sb.stateDir, { mode: 0o700 });
    fs.mkdirSync(archiveDir(), { mode: 0o700 });
    const victim = path.join(sb.root, "victim.txt");
    fs.writeFileSync(victim, "precious\n");
    fs.symlinkSync(victim, path.join(archiveDir(), "velesdb-output.predictable"));
    const names = ["predictable", "fresh"];
    const result = writeArchive(sb.stateDir, { stdout: "original\n" }, () => names.shift()!);
    expect(result).toEqual({ ok: true, path: path.join(archiveDir(), "velesdb-output.fresh") });
    expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
    expect(fs.readlinkSync(path.join(archiveDir(), "velesdb-output.predictable"))).toBe(victim);
    expect(JSON.parse(fs.readFileSync(path.join(archiveDir(), "velesdb-output.fresh"), "utf8"))).toEqual({
      stdout: "original\n",
    });
  });

  // docs/decisions.md#compression: inside a safe state directory, only a link, a non-directory or another
  // user's directory refuses; a looser mode on our own directory is repaired, not refused forever.
  const IS_ROOT = process.getuid?.() === 0;
  test.each([
    [
      "a symlink to a directory elsewhere",
      () => {
        const elsewhere = path.join(sb.root, "elsewhere");
        fs.mkdirSync(elsewhere, { mode: 0o700 });
        fs.symlinkSync(elsewhere, archiveDir());
        return () => expect(fs.readdirSync(elsewhere)).toEqual([]);
      },
      /archive directory .* is a symlink/,
    ],
    [
      "a regular file",
      () => {
        fs.writeFileSync(archiveDir(), "not a directory\n");
        return () => expect(fs.readFileSync(archiveDir(), "utf8")).toBe("not a directory\n");
      },
      /archive directory .* is not a directory/,
    ],
    [
      "another user's directory",
      () => {
        fs.mkdirSync(archiveDir(), { mode: 0o700 });
        fs.chownSync(archiveDir(), 4242, 4242);
        return () => expect(fs.readdirSync(archiveDir())).toEqual([]);
      },
      /archive directory .* is owned by another user/,
    ],
  ])("a tool-output that is %s refuses compression and is left as it is", async (label, plant, note) => {
    if (label.startsWith("another user") && missing(IS_ROOT, "root")) return;
    shipped(await runRule(payloadOf(), hookEnv(fake("medium"))));
    fs.rmSync(archiveDir(), { recursive: true });
    const untouched = plant();
    refused(await runRule(payloadOf(), hookEnv(fake("medium"))), note);
    untouched();
  });

  test.each([
    ["0755", 0o755],
    ["0777", 0o777],
    ["0500", 0o500],
  ])("our own tool-output with mode %s is repaired to 0700 and used", async (_label, mode) => {
    shipped(await runRule(payloadOf(), hookEnv(fake("medium"))));
    fs.rmSync(archiveDir(), { recursive: true });
    fs.mkdirSync(archiveDir());
    fs.chmodSync(archiveDir(), mode);
    const archive = archiveOf(shipped(await runRule(payloadOf(), hookEnv(fake("medium")))).stdout);
    expect(path.dirname(archive)).toBe(archiveDir());
    expect(fs.lstatSync(archiveDir()).mode & 0o777).toBe(0o700);
  });

  test("no net saving removes the archive; a saving ships and keeps it", async () => {
    shipped(await runRule(payloadOf(), hookEnv(fake("medium"))));
    expect(archives().length).toBe(1);
    refused(
      await runRule(payloadOf(), hookEnv(fake("medium"), { VELESDB_HOOK_MIN_SAVED_TOKENS: "1000000" })),
      /below the 1000000 margin/,
    );
    expect(archives().length).toBe(1);
  });
});

describe("persisted outputs (the host saved the full output itself)", () => {
  function persistedPayload(file: string) {
    return payloadOf("x".repeat(30_000), { response: { persistedOutputPath: file, persistedOutputSize: 200 * 1024 } });
  }
  function writeBigFile(): { file: string; content: Buffer } {
    const file = path.join(sb.home, ".claude", "projects", "p", "tool-results", "b1.txt");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // A real output: 3000 progress lines of a Python run (test/support/real-outputs.ts).
    const content = Buffer.from(realOutput("python").stdout);
    fs.writeFileSync(file, content);
    return { file, content };
  }

  test("the compiler receives the whole file at the persisted budget; no persisted keys in the answer", async () => {
    const { file, content } = writeBigFile();
    const record = path.join(sb.root, "record");
    fs.mkdirSync(record);
    const response = shipped(
      await runRule(persistedPayload(file), hookEnv(fake("records"), { VELESDB_FAKE_RECORD_DIR: record })),
    );
    const compile = recordedCalls(record).find((c) => c.args.includes("--query"))!;
    expect(compile.args).toEqual(["compile-stdin", "--budget", "1000", "--query", "Bash output of cargo build"]);
    // The whole file was read: its first and last lines are in the view compiled.
    const all = content.toString().trimEnd().split("\n");
    expect(compile.stdin.toString().split("\n")).toEqual(expect.arrayContaining([all[0], all.at(-1)]));
    expect(response).not.toHaveProperty("persistedOutputPath");
    expect(response).not.toHaveProperty("persistedOutputSize");
    expect(response.stdout).toStartWith("RECORDED");
    // The host's file is the archive: named in the footer, and we wrote none of our own.
    expect(archiveOf(response.stdout)).toBe(file);
    expect(response.stdout).toContain(`from ${content.length} bytes`);
    expect(archives()).toEqual([]);
  });

  test("a persisted path that is a symlink, a directory, relative or a FIFO is refused; the regular file ships", async () => {
    const { file } = writeBigFile();
    shipped(await runRule(persistedPayload(file), hookEnv(fake("medium"))));
    const link = path.join(sb.root, "link.txt");
    fs.symlinkSync(file, link);
    refused(await runRule(persistedPayload(link), hookEnv(fake("medium"))), /saved output is a symlink/);
    refused(await runRule(persistedPayload(path.dirname(file)), hookEnv(fake("medium"))), /not a regular file/);
    refused(await runRule(persistedPayload("relative/b1.txt"), hookEnv(fake("medium"))), /not an absolute path/);
    // A FIFO would block a plain open until a writer came: refused at once instead.
    const fifo = path.join(sb.root, "fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    refused(await runRule(persistedPayload(fifo), hookEnv(fake("medium"))), /not a regular file/);
  });

  test("the persisted budget is min(budget, persisted budget)", async () => {
    const { file } = writeBigFile();
    const record = path.join(sb.root, "record");
    fs.mkdirSync(record);
    const env = hookEnv(fake("records"), { VELESDB_FAKE_RECORD_DIR: record, VELESDB_HOOK_TOKEN_BUDGET: "600" });
    shipped(await runRule(persistedPayload(file), env));
    expect(recordedCalls(record).find((c) => c.args.includes("--query"))!.args[2]).toBe("600");
  });
});

describe("refusals leave the result untouched, each beside its control", () => {
  // [label, control: shipped with these, refusal: same but these, expected note (null: silent pass)]
  type Setup = {
    compiler?: string | null;
    env?: Record<string, string>;
    stdout?: string;
    response?: Record<string, unknown>;
    toolName?: string;
  };
  const rows: [string, Setup, Setup, RegExp | null][] = [
    ["the Read tool", {}, { toolName: "Read" }, null],
    [
      "a tool named in the allowlist but not verified (Grep)",
      { env: { VELESDB_HOOK_COMPRESS_TOOLS: "Bash,Grep" } },
      { env: { VELESDB_HOOK_COMPRESS_TOOLS: "Bash,Grep" }, toolName: "Grep" },
      null,
    ],
    [
      "Bash removed from the allowlist",
      { env: { VELESDB_HOOK_COMPRESS_TOOLS: "Grep, Bash" } },
      { env: { VELESDB_HOOK_COMPRESS_TOOLS: "Grep" } },
      null,
    ],
    ["output one byte under the threshold", { stdout: LOG.slice(0, 12_000) }, { stdout: LOG.slice(0, 11_999) }, null],
    ["an image response", {}, { response: { isImage: true } }, null],
    ["a response without interrupted", {}, { response: { interrupted: "no" } }, /Bash shape/],
    ["a missing binary", {}, { compiler: "/nonexistent/velesdb-memory" }, /not an executable file/],
    ["velesdb-memory not on PATH", {}, { compiler: null }, /velesdb-memory was not found on PATH/],
    [
      "a relative VELESDB_MEMORY_BIN",
      {},
      { compiler: "bin/velesdb-memory" },
      /neither absolute nor a bare command name/,
    ],
    [
      "a failed compilation",
      { compiler: fake("medium") },
      { compiler: fake("fails-compile") },
      /exited 1: Error: a budget of 2000 tokens fits none of the \d+ input tokens/,
    ],
    ["an answer that is not JSON", { compiler: fake("medium") }, { compiler: fake("bad-json") }, /not JSON/],
    ["an empty compilation", { compiler: fake("low") }, { compiler: fake("empty-content") }, /compilation is empty/],
    [
      "a compilation that drops signal lines, at both budgets",
      { compiler: fake("medium") },
      { compiler: fake("drops-lines") },
      /at 4000 tokens left out \d+ of \d+ signal lines/,
    ],
    [
      "one that drops them with the ceiling equal to the budget",
      { compiler: fake("medium"), env: { VELESDB_HOOK_TOKEN_BUDGET_MAX: "2000" } },
      { compiler: fake("drops-lines"), env: { VELESDB_HOOK_TOKEN_BUDGET_MAX: "2000" } },
      /at 2000 tokens left out/,
    ],
    ["a missing risk", { compiler: fake("medium") }, { compiler: fake("risk-missing") }, /has no risk/],
    [
      "an unknown risk",
      { compiler: fake("medium") },
      { compiler: fake("risk-unknown") },
      /risk "minimal" is not low, medium or high/,
    ],
    ["a non-string risk", { compiler: fake("medium") }, { compiler: fake("risk-not-string") }, /risk is a number/],
    [
      "tokens_saved that is not in - out",
      { compiler: fake("low") },
      { compiler: fake("tokens-inconsistent") },
      /tokens_saved \d+ is not tokens_in/,
    ],
    [
      "signal lines that no budget holds (3000 distinct errors)",
      {},
      { stdout: UNIQUE_ERRORS },
      /3000 signal lines need about \d+ tokens, above the 3600 available/,
    ],
    [
      "a saving below margin plus footer",
      { env: { VELESDB_HOOK_MIN_SAVED_TOKENS: "1000" } },
      { env: { VELESDB_HOOK_MIN_SAVED_TOKENS: "1000000" } },
      /below the \d+ margin/,
    ],
  ];

  test.each(rows)("%s", async (_label, control, refusal, note) => {
    const run = (setup: Setup) =>
      runRule(
        payloadOf(setup.stdout ?? LOG, { response: setup.response, toolName: setup.toolName }),
        hookEnv(setup.compiler === undefined ? fake("medium") : setup.compiler, setup.env),
      );
    shipped(await run(control));
    const before = archives().length;
    refused(await run(refusal), note ?? undefined);
    expect(archives().length).toBe(before);
  });

  test("a string-shaped Bash response", async () => {
    shipped(await runRule(payloadOf(), hookEnv(fake("medium"))));
    const payload = { ...payloadOf(), tool_response: LOG };
    refused(await runRule(payload, hookEnv(fake("medium"))), /not an object/);
  });

  test("velesdb-memory found on PATH by name (the control for 'not on PATH')", async () => {
    const bin = path.join(sb.root, "bin");
    fs.mkdirSync(bin);
    // A symlink, as cargo and package managers install binaries; relative PATH entries are skipped.
    fs.symlinkSync(fake("medium"), path.join(bin, "velesdb-memory"));
    fs.symlinkSync(path.join(path.dirname(fake("medium")), "lib.sh"), path.join(bin, "lib.sh"));
    shipped(await runRule(payloadOf(), hookEnv(null, { PATH: `relative-dir::${bin}:${PLAIN_PATH}` })));
  });

  test.each([
    [
      "a state directory with mode 0755",
      (dir: string) => {
        fs.mkdirSync(dir);
        fs.chmodSync(dir, 0o755);
      },
      /state unavailable \(storage: .*mode 755/,
    ],
    [
      "a state directory that is a symlink",
      (dir: string) => {
        const real = path.join(sb.root, "real-state");
        fs.mkdirSync(real, { mode: 0o700 });
        fs.symlinkSync(real, dir);
      },
      /state unavailable \(linked/,
    ],
  ])("unsafe state: %s", async (_label, plant, note) => {
    shipped(await runRule(payloadOf(), hookEnv(fake("medium"))));
    fs.rmSync(sb.stateDir, { recursive: true });
    plant(sb.stateDir);
    refused(await runRule(payloadOf(), hookEnv(fake("medium"))), note);
  });

  test.each([
    ["linked", (marker: string) => fs.symlinkSync(path.join(sb.root, "yes-file"), marker), /is a symlink/],
    ["malformed", (marker: string) => fs.writeFileSync(marker, "maybe\n", { mode: 0o600 }), /is malformed/],
    ["a no", (marker: string) => fs.writeFileSync(marker, "no\n", { mode: 0o600 }), /said no earlier in this session/],
  ])("a probe marker that is %s disables compression; a yes marker enables it", async (_label, plant, note) => {
    fs.writeFileSync(path.join(sb.root, "yes-file"), "yes\n");
    const marker = markerPath({ dir: sb.stateDir }, probeKind(fake("medium")), SESSION);
    shipped(await runRule(payloadOf(), hookEnv(fake("medium"))));
    expect(fs.readFileSync(marker, "utf8")).toBe("yes\n");
    fs.rmSync(marker);
    plant(marker);
    refused(await runRule(payloadOf(), hookEnv(fake("medium"))), note);
  });

  test("a compiler that never returns fails the probe, which is remembered as no", async () => {
    const pids = path.join(sb.root, "pids");
    pidFiles.push(pids);
    const env = hookEnv(fake("hangs"), { VELESDB_HOOK_PROBE_TIMEOUT: "1", VELESDB_FAKE_PID_FILE: pids });
    refused(await runRule(payloadOf(), env), /failed the compile-stdin probe \(probe timed out\)/);
    expect(fs.readFileSync(markerPath({ dir: sb.stateDir }, probeKind(fake("hangs")), SESSION), "utf8")).toBe("no\n");
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
    const started = performance.now();
    refused(await runRule(payloadOf(), env), /said no earlier/);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe("knobs are small decimal integers, never evaluated", () => {
  const knobs: [string, string][] = [
    ["VELESDB_HOOK_MIN_BYTES", "1000"],
    ["VELESDB_HOOK_PROBE_TIMEOUT", "10"],
    ["VELESDB_HOOK_TOKEN_BUDGET", "2000"],
    ["VELESDB_HOOK_TOKEN_BUDGET_MAX", "4000"],
    ["VELESDB_HOOK_PERSISTED_BUDGET", "1000"],
    ["VELESDB_HOOK_MIN_SAVED_TOKENS", "128"],
  ];
  const invalid = ["1+1", "-5", "0x10", "", "12345678901", "0", " 5", "1e3", "2.5"];

  test.each(knobs)("%s: a valid value ships, each invalid one refuses", async (name, valid) => {
    shipped(await runRule(payloadOf(), hookEnv(fake("medium"), { [name]: valid })));
    for (const value of invalid) {
      const decision = await runRule(payloadOf(), hookEnv(fake("medium"), { [name]: value }));
      refused(decision, new RegExp(`^${name}=`));
    }
  });

  test.each([
    ["VELESDB_HOOK_MIN_BYTES", "1000000000", "1000000001"],
    ["VELESDB_HOOK_PROBE_TIMEOUT", "60", "61"],
    ["VELESDB_HOOK_TOKEN_BUDGET", "1000000", "1000001"],
    ["VELESDB_HOOK_MIN_SAVED_TOKENS", "1000000", "1000001"],
  ])("%s: the maximum %s is accepted, %s is not", (_name, atMax, overMax) => {
    const max = Number(atMax);
    expect(parseKnob(atMax, max)).toBe(max);
    expect(parseKnob(overMax, max)).toBeUndefined();
  });

  test("parseKnob reads decimal digits only", () => {
    expect(parseKnob("0010", 100)).toBe(10);
    expect(parseKnob("9999999999", 1e10)).toBe(9_999_999_999);
    for (const text of ["1+1", "-5", "0x10", "", "12345678901", "0", "1_000", "٣"])
      expect(parseKnob(text, 1e12)).toBeUndefined();
  });
});

describe("the compiled hook", () => {
  let hook: HookCommand;
  beforeAll(() => {
    hook = hookCommand();
  });

  function runHook(payload: Record<string, unknown> | string, env: Record<string, string>, cwd = sb.workspace) {
    const started = performance.now();
    const result = Bun.spawnSync([hook.binary, ...hook.args], {
      stdin: Buffer.from(typeof payload === "string" ? payload : JSON.stringify(payload)),
      env,
      cwd,
      stdout: "pipe",
      stderr: "pipe",
      timeout: 60_000,
    });
    return {
      wallMs: performance.now() - started,
      exitCode: result.exitCode,
      answer: parseOneJsonAnswer(result.stdout.toString()),
      stderr: result.stderr.toString(),
    };
  }

  const updatedOutput = (answer: Record<string, unknown>) =>
    (
      answer.hookSpecificOutput as {
        hookEventName: string;
        updatedToolOutput: Record<string, unknown> & { stdout: string };
      }
    ).updatedToolOutput;

  // 5 MB of real output: a `find` listing of 2400 generated files (test/support/real-outputs.ts), 65 times over.
  const FIVE_MB_LOG = realOutput("find").stdout.repeat(65);

  test("positive control: 5 MB through a capable compiler ships, in Claude's shape", () => {
    const result = runHook(payloadOf(FIVE_MB_LOG), hookEnv(fake("medium")));
    expect(result.exitCode).toBe(0);
    expect((result.answer.hookSpecificOutput as Record<string, unknown>).hookEventName).toBe("PostToolUse");
    expect(updatedOutput(result.answer).stdout).toContain("fidelity risk: medium");
    expect(result.stderr).toBe("");
  });

  test("a 2 MB result of every kind of character: the compiler gets its lines as exact UTF-8, the archive its exact JSON", () => {
    const record = path.join(sb.root, "record");
    fs.mkdirSync(record);
    const stdout = `${'naïve 😀 "quoted" \\ tab\t\u001b[31mred\u001b[0m € \u2028 done\n'.repeat(40_000)}`;
    const payload = payloadOf(stdout, { response: { stderr: "warn" } });
    expect(Buffer.byteLength(JSON.stringify(payload))).toBeGreaterThan(2 * 1024 * 1024); // parsed in place (≥ 1 MiB)
    const result = runHook(payload, hookEnv(fake("records"), { VELESDB_FAKE_RECORD_DIR: record }));
    const shippedOutput = updatedOutput(result.answer).stdout;
    expect(shippedOutput).toStartWith("RECORDED");
    const compile = recordedCalls(record).find((c) => c.args.includes("--query"));
    // The view's lines are the output's own, byte for byte (the folded run's first and last, and the stderr line).
    const line = stdout.slice(0, stdout.indexOf("\n"));
    expect(compile!.stdin.toString("utf8").split("\n")).toEqual(expect.arrayContaining([line, "[stderr]", "warn"]));
    expect(compile!.stdin.includes(Buffer.from(line, "utf8"))).toBe(true);
    expect(fs.readFileSync(archiveOf(shippedOutput), "utf8")).toBe(JSON.stringify(payload.tool_response));
  });

  test("never hangs: a never-returning compiler, 5 MB payload, probe timeout 2 → {} within 5 s, nothing left", async () => {
    const pids = path.join(sb.root, "pids");
    pidFiles.push(pids);
    const result = runHook(
      payloadOf(FIVE_MB_LOG),
      hookEnv(fake("hangs"), { VELESDB_HOOK_PROBE_TIMEOUT: "2", VELESDB_FAKE_PID_FILE: pids }),
    );
    expect(result.answer).toEqual({});
    expect(result.exitCode).toBe(0);
    expect(result.wallMs).toBeLessThan(5000);
    expect(result.stderr).toMatch(/^velesdb-hooks: .*probe timed out/);
    expect(pidsFrom(pids).length).toBe(2);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  });

  test("never hangs: a child that leaves a grandchild holding the pipes → {} at once, nothing left", async () => {
    const pids = path.join(sb.root, "pids");
    pidFiles.push(pids);
    const result = runHook(
      payloadOf(FIVE_MB_LOG),
      hookEnv(fake("leaves-grandchild"), { VELESDB_HOOK_PROBE_TIMEOUT: "2", VELESDB_FAKE_PID_FILE: pids }),
    );
    expect(result.answer).toEqual({});
    expect(result.wallMs).toBeLessThan(5000);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  });

  test("never hangs: 5 MB piped to a compilation that never reads stdin ends at the 20 s compile bound", async () => {
    const pids = path.join(sb.root, "pids");
    pidFiles.push(pids);
    const result = runHook(
      payloadOf(FIVE_MB_LOG),
      hookEnv(fake("hangs-on-compile"), { VELESDB_HOOK_PROBE_TIMEOUT: "2", VELESDB_FAKE_PID_FILE: pids }),
    );
    expect(result.answer).toEqual({});
    expect(result.stderr).toMatch(/compilation timed out/);
    expect(result.wallMs).toBeGreaterThan(19_000);
    expect(result.wallMs).toBeLessThan(30_000);
    expect(await waitUntilGone(pidsFrom(pids))).toEqual([]);
  }, 60_000);

  test("a bunfig.toml preload and a .env in the repository are not loaded", () => {
    const witness = path.join(sb.root, "preload-ran");
    fs.writeFileSync(
      path.join(sb.workspace, "preload.ts"),
      `require("node:fs").writeFileSync(${JSON.stringify(witness)}, "ran");\n`,
    );
    fs.writeFileSync(path.join(sb.workspace, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
    // Loaded, this .env would disable compression (an invalid knob) and show in the answer.
    fs.writeFileSync(path.join(sb.workspace, ".env"), "VELESDB_HOOK_MIN_BYTES=1+1\n");
    fs.writeFileSync(path.join(sb.workspace, "noop.ts"), "\n");
    // Control: bun itself, run there, does load the preload (so the trap is armed).
    Bun.spawnSync([process.execPath, "run", "noop.ts"], {
      cwd: sb.workspace,
      env: { ...hookEnv(null), PATH: process.env.PATH ?? PLAIN_PATH },
    });
    expect(fs.existsSync(witness)).toBe(true);
    fs.rmSync(witness);
    const result = runHook(payloadOf(), hookEnv(fake("medium")));
    expect(updatedOutput(result.answer).stdout).toContain("fidelity risk: medium");
    expect(fs.existsSync(witness)).toBe(false);
  });

  realTest("the real compile-stdin on a real pytest run, through the binary: every failure survives", () => {
    const result = runHook(payloadOf(LOG), hookEnv(realCompiler()));
    const stdout = updatedOutput(result.answer).stdout;
    for (const line of PYTEST.mustKeep) expect(stdout.split("\n")).toContain(line);
  });
});

describe("nestedDeeperThan: the level count that spares JSON.stringify a stack overflow (docs/decisions.md#compression)", () => {
  const nested = (depth: number) => JSON.parse(`${"[".repeat(depth)}1${"]".repeat(depth)}`) as unknown;
  test("counts containers, not scalars: exactly at the limit is not deeper", () => {
    expect(nestedDeeperThan({ a: nested(9) }, 10)).toBe(false);
    expect(nestedDeeperThan({ a: nested(10) }, 10)).toBe(true);
    expect(nestedDeeperThan("text", 0)).toBe(false);
    expect(nestedDeeperThan({ stdout: "x", nested: { a: [1, { b: 2 }] } }, 4)).toBe(false);
    expect(nestedDeeperThan({ stdout: "x", nested: { a: [1, { b: {} }] } }, 4)).toBe(true);
  });
  test("a depth that overflows a recursive walk is counted without one", () => {
    expect(nestedDeeperThan(nested(200_000), MAX_NESTING)).toBe(true);
    expect(nestedDeeperThan(nested(MAX_NESTING), MAX_NESTING)).toBe(false);
  });
});

describe("archivePieces: the archive written a slice of the output at a time is JSON.stringify's text exactly (docs/performance/2026-12-02-compression-memory.md)", () => {
  const join = (original: Record<string, unknown>) => [...archivePieces(original)()].join("");
  test.each([
    ["ASCII, several slices", "cargo build\n".repeat(300_000)],
    ["a surrogate pair on every slice boundary", `a${"😀".repeat(700_000)}`],
    ["lone surrogates, quotes, backslashes, NUL, line separators", '\ud800x\udc00"\\\u0000\u2028\n'.repeat(200_000)],
    ["empty", ""],
  ])("%s", (_label, stdout) => {
    const original = {
      stdout,
      stderr: 'warn "x"',
      interrupted: false,
      isImage: false,
      extra: { stdout: "nested, not the output" },
    };
    expect(join(original)).toBe(JSON.stringify(original));
  });
  test.each([
    ["ASCII, several slices", "cargo build\n".repeat(300_000)],
    ["a four-byte character on every slice boundary", `a${"😀".repeat(700_000)}`],
    [
      "two- and three-byte characters, quotes, backslashes, NUL, line separators",
      'é€"\\\u0000\u2028\n'.repeat(200_000),
    ],
    ["empty", ""],
  ])("from a Utf8Literal (%s): the same text as from the string", (_label, stdout) => {
    const original = {
      stdout: new Utf8Literal(Buffer.from(stdout, "utf8")),
      stderr: 'warn "x"',
      interrupted: false,
      isImage: false,
    };
    expect(join(original)).toBe(JSON.stringify({ ...original, stdout }));
  });
  test("utf8Slices never cuts a character, whatever the slice size", () => {
    const text = "a😀é€b".repeat(50);
    const bytes = Buffer.from(text, "utf8");
    for (let size = 1; size <= 9; size++) {
      const slices = [...utf8Slices(bytes, size)];
      expect(slices.join("")).toBe(text);
      for (const slice of slices) expect(slice).not.toContain("\ufffd");
      // Positive control of the rule: a plain cut every `size` bytes breaks characters.
      if (size < 4)
        expect(
          Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
            bytes.toString("utf8", i * size, (i + 1) * size),
          ).join(""),
        ).toContain("\ufffd");
    }
  });
  test("key order is kept; an output that is not a string is serialised whole", () => {
    const original = { stderr: "", stdout: "x".repeat(10), z: 1, a: 2 };
    expect(join(original)).toBe(JSON.stringify(original));
    expect(join({ stdout: 5, stderr: "" })).toBe('{"stdout":5,"stderr":""}');
  });
  test("the archive file holds the same bytes (positive control: writeArchive round-trips)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vh-archive-pieces-"));
    try {
      const original = { stdout: "é😀 line\n".repeat(400_000), stderr: "", interrupted: false, isImage: false };
      const result = writeArchive(dir, original);
      expect(result.ok).toBe(true);
      if (result.ok) expect(fs.readFileSync(result.path, "utf8")).toBe(JSON.stringify(original));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
