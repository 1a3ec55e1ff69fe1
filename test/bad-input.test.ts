// docs/contract.md §10, first row: stdin that is not a usable object never crashes a hook, never prints a
// stack trace, and gets the hook's answer for `{}` with one stderr line saying what was wrong.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  additionalContextOf,
  BINARY,
  makeSandbox,
  parseOneJsonAnswer,
  runBinary,
  type Sandbox,
} from "./support/hook-runner.ts";

let box: Sandbox;
beforeAll(() => {
  box = makeSandbox("badin");
});
afterAll(() => box.cleanup());

const FIVE_MB_PAYLOAD = JSON.stringify({
  session_id: "big",
  cwd: "",
  hook_event_name: "SessionStart",
  source: "startup",
  padding: "x".repeat(5 * 1024 * 1024),
});

const BAD_INPUTS: ReadonlyArray<readonly [string, string | Uint8Array, RegExp | null]> = [
  ["empty stdin", "", /stdin was empty/],
  ["not JSON", "{oops", /stdin is not JSON/],
  ["a JSON array", "[1,2,3]", /not an object/],
  ["a JSON string", '"hello"', /not an object/],
  [
    "wrong field types",
    JSON.stringify({ cwd: 5, session_id: { a: 1 }, source: [], transcript_path: 7, stop_hook_active: "yes" }),
    null,
  ],
  ["NUL in cwd", JSON.stringify({ cwd: "/tmp/\u0000x", session_id: "nul" }), null],
  ["invalid UTF-8", new Uint8Array([0xff, 0xfe, 0x7b, 0x80]), /not JSON/],
];

function expectNoStackTrace(text: string) {
  expect(text).not.toMatch(/^\s+at /m);
  expect(text).not.toMatch(/TypeError|ReferenceError|SyntaxError|RangeError/);
  expect(text.split("\n").filter(Boolean).length).toBeLessThanOrEqual(1);
}

describe.each([
  ["claude", "session-start", "json"],
  ["claude", "stop", "json"],
  ["claude", "pre-compact", "text"],
  ["codex", "session-start", "json"],
  ["codex", "stop", "json"],
] as const)("%s %s", (host, event, form) => {
  test.each(BAD_INPUTS)("%s: answered with defaults, exit 0, no stack trace", (_label, stdin, stderrPattern) => {
    const result = runBinary([host, event], stdin, { env: box.env, cwd: box.workspace });
    expect(result.exitCode).toBe(0);
    expectNoStackTrace(result.stderr);
    if (stderrPattern) expect(result.stderr).toMatch(stderrPattern);
    if (form === "text") {
      expect(result.stdout).toContain("save_working_context(");
      return;
    }
    const answer = parseOneJsonAnswer(result.stdout);
    if (event === "session-start")
      expect(additionalContextOf(answer)).toContain('load_working_context(project="project"');
  });

  test("a 5 MB payload is read whole and answered", () => {
    const result = runBinary(
      [host, event],
      FIVE_MB_PAYLOAD.replace('"cwd":""', `"cwd":${JSON.stringify(box.workspace)}`),
      {
        env: box.env,
        cwd: box.root,
      },
    );
    expect(result.exitCode).toBe(0);
    expectNoStackTrace(result.stderr);
    if (form === "json") parseOneJsonAnswer(result.stdout);
    if (event === "session-start")
      expect(additionalContextOf(parseOneJsonAnswer(result.stdout))).toContain('project="project"');
  });
});

// docs/decisions.md#hook-input-and-answers: stdin is read up to 64 MiB; beyond that the hook passes without reading
// (or allocating) the rest. 100 MB of invalid UTF-8 cost 3 s and 317 MB before.
describe.skipIf(!fs.existsSync("/usr/bin/time"))("stdin above the 64 MiB cap", () => {
  const OVERSIZED = Buffer.alloc(100 * 1024 * 1024, 0xff);
  // Peak memory comes from GNU time (.ci/run installs it): Bun's resourceUsage.maxRSS for a
  // child reads ~220 MB here whatever the child does.
  const GNU_TIME = "/usr/bin/time";
  const runMeasured = (args: string[], stdin: Uint8Array) => {
    const result = Bun.spawnSync([GNU_TIME, "-f", "peak-kb=%M", "-o", path.join(box.root, "peak"), BINARY, ...args], {
      stdin,
      env: box.env,
      cwd: box.workspace,
      timeout: 20_000,
      stdout: "pipe",
      stderr: "pipe",
    });
    const peakKb = Number(/peak-kb=(\d+)/.exec(fs.readFileSync(path.join(box.root, "peak"), "utf8"))?.[1]);
    return {
      exitCode: result.exitCode,
      stdout: result.stdout.toString(),
      stderr: result.stderr.toString(),
      maxRssBytes: peakKb * 1024,
    };
  };
  test.each([
    ["claude", "session-start", "{}\n"],
    ["claude", "stop", "{}\n"],
    ["claude", "pre-compact", ""],
    ["codex", "session-start", "{}\n"],
    ["dsh", "stop", "{}\n"],
  ])("%s %s: passes with one stderr line, without reading the rest", (host, event, passAnswer) => {
    const result = runMeasured([host, event], OVERSIZED);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(passAnswer);
    expect(result.stderr).toBe("velesdb-hooks: stdin is larger than 64 MiB: not read, passing\n");
    // The 64 MiB kept while reading, plus the runtime (~20 MB): never the whole input.
    expect(result.maxRssBytes).toBeLessThan(128 * 1024 * 1024);
  });

  test("positive control: a 60 MiB payload is still read whole and answered", () => {
    const payload = JSON.stringify({
      cwd: box.home,
      hook_event_name: "SessionStart",
      padding: "x".repeat(60 * 1024 * 1024),
    });
    const result = runMeasured(["claude", "session-start"], Buffer.from(payload));
    expect(result.exitCode).toBe(0);
    expect(additionalContextOf(parseOneJsonAnswer(result.stdout))).toContain('project="home"');
  });
});

test("stdin treated as {} uses the process cwd (positive control: the payload cwd wins when present)", () => {
  const fromProcess = runBinary(["claude", "session-start"], "not json", { env: box.env, cwd: box.workspace });
  expect(additionalContextOf(parseOneJsonAnswer(fromProcess.stdout))).toContain('project="project"');
  const fromPayload = runBinary(["claude", "session-start"], { cwd: box.home }, { env: box.env, cwd: box.workspace });
  expect(additionalContextOf(parseOneJsonAnswer(fromPayload.stdout))).toContain('project="home"');
});

// A host may hand the hook a non-blocking pipe and write the payload after the spawn: every
// read before the bytes arrive fails with EAGAIN, and the hook must wait for them (output.ts's
// pauseForPipe), not take the empty pipe for an empty payload. perl (Debian's perl-base) makes
// the pipe: Bun and bash cannot set O_NONBLOCK on a child's stdin.
const LATE_WRITER = `
use Fcntl;
pipe(my $r, my $w) or die "pipe: $!";
fcntl($r, F_SETFL, fcntl($r, F_GETFL, 0) | O_NONBLOCK) or die "fcntl: $!";
die "still blocking" unless fcntl($r, F_GETFL, 0) & O_NONBLOCK;
my $pid = fork() // die "fork: $!";
if ($pid == 0) { close $w; open(STDIN, "<&", $r) or die "dup: $!"; exec(@ARGV) or die "exec: $!"; }
close $r;
my $half = int(length($ENV{PAYLOAD}) / 2);
select(undef, undef, undef, 0.3);
syswrite($w, substr($ENV{PAYLOAD}, 0, $half));
select(undef, undef, undef, 0.2);
syswrite($w, substr($ENV{PAYLOAD}, $half));
close $w;
waitpid($pid, 0);
exit($? >> 8);
`;

test("a payload written late, in two pieces, on a non-blocking pipe is read whole", () => {
  const payload = JSON.stringify({
    session_id: "late",
    cwd: box.home,
    hook_event_name: "SessionStart",
    source: "startup",
  });
  const run = Bun.spawnSync(["perl", "-e", LATE_WRITER, BINARY, "claude", "session-start"], {
    env: { ...box.env, PAYLOAD: payload },
    cwd: box.workspace,
    stdout: "pipe",
    stderr: "pipe",
    timeout: 20_000,
  });
  expect(run.stderr.toString()).toBe("");
  expect(run.exitCode).toBe(0);
  // The payload's cwd (home), not the process cwd (project) an empty stdin would fall back to.
  expect(additionalContextOf(parseOneJsonAnswer(run.stdout.toString()))).toContain('project="home"');
});
